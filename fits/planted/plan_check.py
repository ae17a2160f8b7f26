"""`orch next` on planted truths: designs compared on the same truths and noise, each starting
from 4 sizes x 1 seed per objective and spending 2x the start's FLOPs in rounds of up to 4 runs,
the final interval always from orch's own fit and verdict. `bench/next.py` prints the figures.

A replicate draws A's truth from one of FAMILIES (the four law families and one outside them),
B = A slowed by a planted gap (f_B(S) = f_A(S / gap)), and judges CLAIM ("A needs 42x fewer
samples", within x2) after each design's runs. FLOPs are proportional to samples here.
"""

from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from fits.claims.claim import Outcome
from fits.claims.verdicts import judge
from fits.curve.fit import curve_points
from fits.curve.laws import broken, logistic, power, saturating
from fits.curve.settings import FitSettings
from fits.next.outlook import Cell
from fits.next.plan import plan_runs
from fits.planted.calibration import CLAIMS, planted_curve, planted_run
from fits.planted.procedure import SIGMA, draw_truth

__all__ = [
    "DESIGNS",
    "FAMILIES",
    "GAPS",
    "DesignOutcome",
    "Paired",
    "Summary",
    "compare_designs",
    "paired",
    "summarize",
]

AXIS = 145e3 * 2.0 ** np.arange(8)  # the sweep's data sizes: 145K .. 18.6M
START = AXIS[[0, 2, 4, 6]]
SIZES = np.array([AXIS[0] / 2, *AXIS, AXIS[-1] * 2])  # the candidates: one octave beyond each end
GAPS = (1.0, 3.0, 10.0, 42.0, 100.0)
FAMILIES = ("saturating", "power", "logistic", "broken", "outside")
ROUND = 4  # runs per round
MAX_ROUNDS = 8  # a design that buys many small runs stops here
PLANNED_ROUNDS = 3  # orch next spreads the budget over this many rounds
CLAIM = CLAIMS["gap"]  # 42x within x2
OBJECTIVES = ("A", "B")
SETTINGS = FitSettings()  # each trial's final checkpoint, nothing held out


def _truth(family: str, rng: np.random.Generator) -> Callable[[np.ndarray], np.ndarray]:
    """A's curve: a law of `family`, about 0.03-0.1 at 145K and rising over the axis."""
    if family == "saturating":
        params = draw_truth(rng)
        return lambda s: saturating(s, **params)
    if family == "power":
        a, alpha = rng.uniform(0.08, 0.12), rng.uniform(0.1, 0.3)
        return lambda s: power(s, a, alpha)
    if family == "logistic":
        lo, rise, mid, width = (
            rng.uniform(0.02, 0.05),
            rng.uniform(0.15, 0.3),
            rng.uniform(5.5, 7),
            rng.uniform(0.6, 1.2),
        )
        return lambda s: logistic(s, lo, rise, mid, width)
    if family == "broken":
        a, a1, a2, at = (
            rng.uniform(0.1, 0.15),
            rng.uniform(0.2, 0.35),
            rng.uniform(0.05, 0.15),
            rng.uniform(6, 7),
        )
        return lambda s: broken(s, a, a1, a2, at)
    top, s0, alpha = rng.uniform(0.15, 0.3), 10 ** rng.uniform(6, 7), rng.uniform(0.3, 0.6)
    return lambda s: top * np.tanh((np.asarray(s, dtype=float) / s0) ** alpha)  # outside every family


@dataclass(frozen=True)
class DesignOutcome:
    design: str
    family: str
    gap: float
    width: float  # ln(high / low) of the final interval; inf when there is none or it is open
    covered: bool | None  # the interval holds the planted gap (None: no interval)
    covered_90: bool | None  # the same at a nominal 90% (the calibration goal)
    correct: bool  # supported where the planted gap is in the claimed region, else contradicted
    flops: float


def _fit(runs: dict[str, list[tuple[float, float]]]):
    curves = [planted_curve(o, curve_points(*zip(*runs[o], strict=True))) for o in OBJECTIVES]
    return planted_run(*curves)


def _cells() -> list[Cell]:
    return [Cell(o, "m", float(s), k, float(s) * k) for o in OBJECTIVES for s in SIZES for k in (1, 2)]


def _uniform(state) -> list[Cell]:
    """The odd octaves between the start's sizes, 72K to 18.6M, one seed each for both
    objectives, the largest first (what the budget leaves out is the cheapest)."""
    order = [Cell(o, "m", float(s), 1, float(s)) for s in SIZES[::2][::-1] for o in OBJECTIVES]
    return [c for c in order if (c.objective, c.samples) not in state.bought and c.flops <= state.left][
        :ROUND
    ]


def _random(state) -> list[Cell]:
    cells = [c for c in _cells() if c.seeds == 1]
    return [cells[i] for i in state.rng.permutation(len(cells))[:ROUND]]


def _cheapest(state) -> list[Cell]:
    return sorted((c for c in _cells() if c.seeds == 1), key=lambda c: (c.flops, state.count(c)))[:ROUND]


def _largest(state) -> list[Cell]:
    """The largest size both objectives can afford, then more seeds at the largest sizes."""
    cells = [c for c in _cells() if c.seeds == 1 and 2 * c.flops <= state.left]
    return sorted(cells, key=lambda c: (-c.flops, c.objective))[:ROUND]


def _orch(state) -> list[Cell]:
    """Up to ROUND runs a round, spending the budget left over PLANNED_ROUNDS rounds."""
    budget = state.left / max(PLANNED_ROUNDS - state.round, 1)
    plan = plan_runs(
        [CLAIM], _fit(state.runs), SETTINGS, (), _cells(), budget=budget, runs=ROUND, seed=state.round
    )
    return [p.cell for p in plan.picks]


DESIGNS = {
    "orch next": _orch,
    "uniform grid": _uniform,
    "random": _random,
    "cheapest first": _cheapest,
    "largest + seeds": _largest,
}


class _State:
    def __init__(self, runs, budget: float, rng):
        self.runs, self.left, self.rng, self.round = runs, budget, rng, 0
        self.bought: set[tuple[str, float]] = set()

    def count(self, cell: Cell) -> int:
        return sum(1 for s, _ in self.runs[cell.objective] if s == cell.samples)


def _replicate(family: str, gap: float, seed: int) -> list[DesignOutcome]:
    rng = np.random.default_rng(seed)
    truth_a = _truth(family, rng)
    truths = {"A": truth_a, "B": lambda s: truth_a(np.asarray(s, dtype=float) / gap)}
    noise = rng.normal(0, SIGMA, (2, 64))  # each design's k-th run of an objective gets the same noise
    start = {
        o: [(float(s), float(truths[o](s) + noise[i, j])) for j, s in enumerate(START)]
        for i, o in enumerate(OBJECTIVES)
    }
    budget = 2 * 2 * float(START.sum())
    outcomes = []
    for name, design in DESIGNS.items():
        state = _State({o: list(v) for o, v in start.items()}, budget, np.random.default_rng(seed + 1))
        while state.round < MAX_ROUNDS:
            bought = []
            for cell in design(state):
                if cell.flops > state.left:
                    continue
                state.left -= cell.flops
                bought.append(cell)
                state.bought.add((cell.objective, cell.samples))
                for _ in range(cell.seeds):
                    i = OBJECTIVES.index(cell.objective)
                    k = len(state.runs[cell.objective])
                    state.runs[cell.objective].append(
                        (cell.samples, float(truths[cell.objective](cell.samples) + noise[i, k % 64]))
                    )
            state.round += 1
            if not bought:
                break
        final = _fit(state.runs)
        verdict, narrower = judge(CLAIM, final), judge(CLAIM, final, confidence=0.90)
        interval = verdict.interval
        closed = interval is not None and interval[0] > 0 and np.isfinite(interval[1])
        truth_in = CLAIM.region.holds(gap, gap)
        outcomes.append(
            DesignOutcome(
                name,
                family,
                gap,
                float(np.log(interval[1] / interval[0])) if closed else float("inf"),
                _holds(interval, gap),
                _holds(narrower.interval, gap),
                verdict.verdict is (Outcome.SUPPORTED if truth_in else Outcome.CONTRADICTED),
                budget - state.left,
            )
        )
    return outcomes


def _holds(interval: tuple[float, float] | None, gap: float) -> bool | None:
    return None if interval is None else bool(interval[0] <= gap <= interval[1])


@dataclass(frozen=True)
class Summary:
    """One design's outcomes over a set of replicates."""

    widths: np.ndarray  # inf where the verdict has no closed interval
    covered: np.ndarray  # over the replicates with an interval
    covered_90: np.ndarray  # the same at a nominal 90%
    correct: np.ndarray
    flops: np.ndarray

    @property
    def median_width(self) -> float:
        return float(np.median(self.widths))

    @property
    def coverage(self) -> float:
        return float(self.covered.mean()) if self.covered.size else float("nan")

    @property
    def coverage_90(self) -> float:
        return float(self.covered_90.mean()) if self.covered_90.size else float("nan")

    @property
    def correct_share(self) -> float:
        return float(self.correct.mean())


def summarize(outcomes: list[DesignOutcome], families: set[str] | None = None) -> dict[str, Summary]:
    """design -> its Summary over the replicates of `families` (default: all), in DESIGNS order."""
    chosen = [o for o in outcomes if families is None or o.family in families]
    found = {}
    for design in DESIGNS:
        mine = [o for o in chosen if o.design == design]
        found[design] = Summary(
            np.array([o.width for o in mine]),
            np.array([o.covered for o in mine if o.covered is not None], dtype=float),
            np.array([o.covered_90 for o in mine if o.covered_90 is not None], dtype=float),
            np.array([o.correct for o in mine], dtype=float),
            np.array([o.flops for o in mine]),
        )
    return found


def compare_designs(
    replicates: int, seed: int = 0, workers: int = 1, families=FAMILIES
) -> list[DesignOutcome]:
    """`replicates` truths, cycling over families x GAPS, every design on each."""
    jobs = [
        (families[i % len(families)], GAPS[(i // len(families)) % len(GAPS)], seed * 100_003 + i)
        for i in range(replicates)
    ]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            chunks = list(pool.map(_replicate, *zip(*jobs, strict=True)))
    else:
        chunks = [_replicate(*job) for job in jobs]
    return [o for chunk in chunks for o in chunk]


@dataclass(frozen=True)
class Paired:
    """orch next against one design, replicate by replicate (the same truth and noise)."""

    narrower: int  # replicates where orch next's final interval is the narrower
    wider: int  # where it is the wider (ties, both open included, count in neither)
    width_ratios: np.ndarray  # orch next's width over the design's (0 or inf where one never closed)
    right_only: int  # orch next's verdict correct and the design's not
    wrong_only: int  # the design's correct and orch next's not


def paired(outcomes: list[DesignOutcome], design: str, mine: str = "orch next") -> Paired:
    """`mine` against `design` on each replicate both ran (outcomes in `compare_designs` order)."""
    ours = [o for o in outcomes if o.design == mine]
    theirs = [o for o in outcomes if o.design == design]
    a, b = np.array([o.width for o in ours]), np.array([o.width for o in theirs])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(np.isinf(a) & np.isinf(b), 1.0, a / b)
    right = np.array([o.correct for o in ours]), np.array([o.correct for o in theirs])
    return Paired(
        int((a < b).sum()),
        int((a > b).sum()),
        ratios,
        int((right[0] & ~right[1]).sum()),
        int((~right[0] & right[1]).sum()),
    )
