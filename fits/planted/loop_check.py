"""The closed loop (`orch sweep --until-decided`) on planted truths: how often it ends on a wrong
verdict, how often it decides, and what it spends, against uniform grids on the same truths.
`bench/loop.py` prints the figures.

A replicate draws A's saturating truth (`fits.planted.procedure.draw_truth`), makes B from it
slowed by a planted factor, and starts from a sparse grid: START's 4 sizes x 1 seed for each
objective, the kind of grid after which claims stay open. The loop then does what the driver
does (`fits.next.rounds`): judge; stop once decided; else plan up to BATCH runs with orch's own
planner (`fits.next.plan.plan_runs`) within the round's share of the budget (all that is left
where the share buys nothing), run them (the truth plus seed noise), and look again, at most
MAX_ROUNDS rounds. One trajectory gives two rules:
- naive: stop at the first look whose 95% verdict is decided;
- spent: stop at the first look decided at `look_confidence` (the looks share 5%): the driver's.
The planner reads the spent rule's verdicts, as the driver's does, and the naive rule is read
along the same path: its verdict is the first decided 95% look there.

The uniform grids judged once on the same truth (fresh noise): START alone, then every size of
AXIS with 1, 2 and 3 seeds. FLOPs are samples here (one model), summed over both objectives.
"""

from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from fits.claims.claim import Claim, Kind, Outcome, Region, Verdict
from fits.claims.verdicts import judge
from fits.curve.fit import curve_points
from fits.curve.laws import saturating
from fits.curve.settings import FitSettings
from fits.next.outlook import Cell
from fits.next.plan import plan_runs
from fits.next.rounds import look_confidence, round_budget
from fits.planted.calibration import (
    CLAIMS,
    FALSE_PLANTED,
    LEVEL_OFF,
    LEVEL_TOLERANCE,
    PLANTED,
    planted_curve,
    planted_run,
)
from fits.planted.procedure import SIGMA, draw_truth

__all__ = ["EXPERIMENTS", "GRIDS", "LoopOutcome", "loop_outcomes"]

AXIS = 145e3 * 2.0 ** np.arange(10)  # 145K .. 74M
START = AXIS[[0, 3, 6, 9]]  # 145K, 1.16M, 9.3M, 74M
CANDIDATES = np.array([AXIS[0] / 2, *AXIS, AXIS[-1] * 2])  # orch next's axis: one octave beyond each end
LEVEL_AT = float(AXIS[-1] * 2)  # a forecast: one octave past the grid
BATCH = 4  # runs a round
MAX_ROUNDS = 4
BUDGET = 2.0  # the loop's FLOPs, in units of the start's
OBJECTIVES = ("A", "B")
SETTINGS = FitSettings()
GRIDS = {"start": (START, 1), "uniform x1": (AXIS, 1), "uniform x2": (AXIS, 2), "uniform x3": (AXIS, 3)}

# experiment -> (B's slowing factor, whether the claim is true)
EXPERIMENTS = {  # the four first (a true and a false gap, a level and an order claim)
    "gap true 42x": (PLANTED, True),
    "gap false 10x": (FALSE_PLANTED, False),
    "level false": (PLANTED, False),
    "order true": (PLANTED, True),
    "level true": (PLANTED, True),
    "order false": (PLANTED, False),
}


@dataclass(frozen=True)
class LoopOutcome:
    experiment: str
    naive: str  # the verdict, stopping at the first decided 95% look
    naive_flops: float  # the start's and the rounds' FLOPs when it stopped
    spent: str  # the verdict under the shared error rate (the driver's rule)
    spent_flops: float
    rounds: int  # rounds the spent rule ran
    grids: dict[str, tuple[str, float]]  # uniform grid -> (its 95% verdict, its FLOPs)

    @property
    def wrong(self) -> str:
        """The verdict that would be wrong for this experiment's truth."""
        return Outcome.CONTRADICTED.value if EXPERIMENTS[self.experiment][1] else Outcome.SUPPORTED.value


def _claim(experiment: str, truth: dict[str, float]) -> Claim:
    kind, holds = Kind(experiment.split()[0]), EXPERIMENTS[experiment][1]
    if kind is Kind.GAP:
        return CLAIMS["gap"]
    if kind is Kind.ORDER:
        return CLAIMS["order_true" if holds else "order_false"]
    level = float(saturating(LEVEL_AT, **truth)) + (0.0 if holds else LEVEL_OFF)
    region = Region.around(level, LEVEL_TOLERANCE, factor=False)
    return Claim(
        id="level", kind="level", says="level", source="planted", region=region, objective="A", at=LEVEL_AT
    )


class _World:
    """One replicate's truths, and the runs each objective has landed."""

    def __init__(self, truth: dict[str, float], factor: float, rng: np.random.Generator):
        slowed = dict(truth, b=truth["b"] * factor ** truth["alpha"])
        self.truths, self.rng = {"A": truth, "B": slowed}, rng

    def measure(self, objective: str, sizes: np.ndarray, seeds: int) -> list[tuple[float, float]]:
        samples = np.repeat(np.asarray(sizes, dtype=float), seeds)
        values = saturating(samples, **self.truths[objective]) + self.rng.normal(0, SIGMA, samples.size)
        return list(zip(samples.tolist(), values.tolist(), strict=True))


def _fit(runs: dict[str, list[tuple[float, float]]]):
    return planted_run(*[planted_curve(o, curve_points(*zip(*runs[o], strict=True))) for o in OBJECTIVES])


def _cells() -> list[Cell]:
    return [Cell(o, "m", float(s), k, float(s) * k) for o in OBJECTIVES for s in CANDIDATES for k in (1, 2)]


def _buy(claim: Claim, curves, looked: Verdict, cells: list[Cell], budget: float, seed: int) -> list[Cell]:
    plan = plan_runs([claim], curves, SETTINGS, (looked,), cells, budget=budget, runs=BATCH, seed=seed)
    return [*plan.first, *(p.cell for p in plan.picks)]


def _decided(verdict: Verdict) -> bool:
    return verdict.verdict is not Outcome.INCONCLUSIVE


def _replicate(experiment: str, seed: int) -> LoopOutcome:
    rng = np.random.default_rng(seed)
    truth = draw_truth(rng)
    world = _World(truth, EXPERIMENTS[experiment][0], rng)
    claim = _claim(experiment, truth)
    runs = {o: world.measure(o, START, 1) for o in OBJECTIVES}
    flops = 2 * float(START.sum())
    left = BUDGET * flops
    confidence = look_confidence(MAX_ROUNDS)
    naive = None
    rounds = 0
    while True:
        curves = _fit(runs)
        looked = judge(claim, curves)
        if naive is None and _decided(looked):
            naive = (looked.verdict.value, flops)
        spent = judge(claim, curves, confidence=confidence)
        if _decided(spent) or rounds == MAX_ROUNDS:
            break
        cells = _cells()
        cheapest = min(c.flops for c in cells)
        if cheapest > left:
            break
        share = max(round_budget(left, MAX_ROUNDS - rounds), cheapest)
        bought = _buy(claim, curves, spent, cells, share, rounds)
        if not bought and share < left:  # as the driver: a round whose share buys nothing spends all left
            bought = _buy(claim, curves, spent, cells, left, rounds)
        if not bought:
            break
        for cell in bought:
            runs[cell.objective] += world.measure(cell.objective, np.array([cell.samples]), cell.seeds)
            flops += cell.flops
            left -= cell.flops
        rounds += 1
    naive = naive or (looked.verdict.value, flops)
    grids = {}
    for name, (sizes, seeds) in GRIDS.items():
        grid = {o: world.measure(o, sizes, seeds) for o in OBJECTIVES}
        grids[name] = (judge(claim, _fit(grid)).verdict.value, 2 * float(sizes.sum()) * seeds)
    return LoopOutcome(experiment, *naive, spent.verdict.value, flops, rounds, grids)


def loop_outcomes(
    replicates: int, experiments: tuple[str, ...] = tuple(EXPERIMENTS), seed: int = 0, workers: int = 1
) -> Iterator[LoopOutcome]:
    """`replicates` replicates of each experiment, each from its own seed, interleaved (a run
    stopped early has as many of each), as they end."""
    jobs = [(e, seed * 1_000_003 + i * 7 + j) for i in range(replicates) for j, e in enumerate(EXPERIMENTS)]
    jobs = [job for job in jobs if job[0] in experiments]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            yield from pool.map(_replicate, *zip(*jobs, strict=True), chunksize=4)
        return
    yield from (_replicate(*job) for job in jobs)
