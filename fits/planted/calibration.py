"""The verdicts on planted truths: how often a true claim is supported and a false one
contradicted, when the claims are judged exactly as `orch check` judges them. `bench/fitting.py`
prints these rates with their binomial SEs; the slow tests hold them to the goals.

Each replicate draws a saturating truth for A (`fits.planted.procedure.draw_truth`) and makes B from it
slowed by a planted factor (f_B(S) = f_A(S / factor)), both measured at the planted sizes with
seed noise, and judges:
- gap: "A needs 42x fewer samples" (42 within x2) where 42x is planted (true) and where 10x is
  (false), on 10 sizes and 3 seeds; and both again on an underpowered design (1 seed, 7 sizes
  spanning 64x, so that both crossings sit near the ends of the data), where the goal is only
  that a verdict is seldom wrong;
- level: A's alignment at twice its largest size (a forecast), within 0.015 of the truth (true)
  or of the truth + 0.04 (false);
- order: A above B (true) and B above A (false).
"""

from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from fits.claims.claim import Claim, Region
from fits.claims.verdicts import judge
from fits.curve.curveset import CurveFit, CurveKey, CurveSet
from fits.curve.ensemble import build_ensemble
from fits.curve.fit import CurvePoints, curve_points, fit_laws, law_weights
from fits.curve.laws import saturating
from fits.curve.measured_gap import measured_gap
from fits.planted.procedure import SEEDS, SIGMA, SIZES, draw_truth, simulate

__all__ = [
    "CLAIMS",
    "GOALS",
    "Rates",
    "binomial_se",
    "measured_gap_coverage",
    "planted_curve",
    "planted_run",
    "verdict_rates",
]

PLANTED, FALSE_PLANTED = 42.0, 10.0
UNDERPOWERED = SIZES[:7]  # 145K .. 9.3M: 64x, about 1.5 times the planted gap
LEVEL_AT = int(SIZES[-1] * 2)
LEVEL_TOLERANCE, LEVEL_OFF = 0.015, 0.04
CHUNK = 25  # replicates drawn from one random stream


def _claim(id: str, kind: str, region: Region, **fields) -> Claim:
    return Claim(id=id, kind=kind, says=id, source="planted", region=region, **fields)


GAP = Region.around(PLANTED, 2.0, factor=True)
CLAIMS = {
    "gap": _claim("gap", "gap", GAP, faster="A", slower="B"),
    "order_true": _claim("order_true", "order", Region(0.0), above="A", below="B"),
    "order_false": _claim("order_false", "order", Region(0.0), above="B", below="A"),
}


# experiment -> (verdict, goal): "at least" for the verdict a claim should get, "at most" for one
# it should not
GOALS = {
    "gap_true": (("supported", ">=", 0.80), ("contradicted", "<=", 0.05)),
    "gap_false": (("contradicted", ">=", 0.80), ("supported", "<=", 0.05)),
    "gap_underpowered_true": (("contradicted", "<=", 0.05),),
    "gap_underpowered_false": (("supported", "<=", 0.05),),
    "level_true": (("supported", ">=", 0.80), ("contradicted", "<=", 0.05)),
    "level_false": (("contradicted", ">=", 0.80), ("supported", "<=", 0.05)),
    "order_true": (("supported", ">=", 0.80), ("contradicted", "<=", 0.05)),
    "order_false": (("contradicted", ">=", 0.80), ("supported", "<=", 0.05)),
}


@dataclass
class Rates:
    """Verdict counts per experiment: experiment -> verdict -> count, over `replicates`."""

    replicates: int
    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, experiment: str, verdict: str) -> None:
        self.counts.setdefault(experiment, {}).setdefault(verdict, 0)
        self.counts[experiment][verdict] += 1

    def share(self, experiment: str, verdict: str) -> float:
        return self.counts.get(experiment, {}).get(verdict, 0) / self.replicates

    def meets(self, experiment: str, verdict: str, side: str, goal: float) -> bool:
        share = self.share(experiment, verdict)
        return share >= goal if side == ">=" else share <= goal

    def se(self, experiment: str, verdict: str) -> float:
        return binomial_se(self.share(experiment, verdict), self.replicates)


def binomial_se(share: float, count: int) -> float:
    return float(np.sqrt(share * (1 - share) / count))


def planted_curve(name: str, points: CurvePoints) -> CurveFit:
    fits = fit_laws(points)
    ensemble = build_ensemble(points, fits, law_weights(fits), (0.0, 1.0))
    return CurveFit(CurveKey(name, "m", "mutual_knn@10", "r", "e"), points, fits, ensemble, None, (), ())


def planted_run(*curves: CurveFit) -> CurveSet:
    """The curves as the curve stage would hand them on."""
    return CurveSet(curves)


def _slowed(truth: dict[str, float], factor: float) -> dict[str, float]:
    return dict(truth, b=truth["b"] * factor ** truth["alpha"])


Replicate = Callable[[np.random.Generator], list[tuple[str, str]]]  # one draw: (experiment, verdict)s


def verdict_rates(
    replicates: int, seed: int = 0, workers: int = 1, replicate: Replicate | None = None
) -> Rates:
    """Every experiment of `replicate` (default: those above), `replicates` times. Replicates
    are drawn CHUNK at a time, each chunk from its own stream (seed, chunk), so that `workers`
    processes count what one does."""
    replicate = replicate or _replicate
    jobs = [
        (replicate, min(CHUNK, replicates - start), (seed, start // CHUNK))
        for start in range(0, replicates, CHUNK)
    ]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            chunks = list(pool.map(_chunk, *zip(*jobs, strict=True)))
    else:
        chunks = [_chunk(*job) for job in jobs]
    rates = Rates(replicates)
    for experiment, verdict in (pair for chunk in chunks for pair in chunk):
        rates.add(experiment, verdict)
    return rates


def measured_gap_coverage(replicates: int, seed: int = 0) -> dict[str, float]:
    """The share of the seed means' 95% gap intervals (read at B's largest size) that hold the
    planted 42x: with seeds measured apart at each size, and with one run per seed scored at
    every size (a run's offset, sd 0.8 SIGMA, shared by its checkpoints, plus 0.4 SIGMA each)."""
    rng = np.random.default_rng(seed)
    runs = np.repeat(np.arange(SEEDS), len(SIZES))

    def one_run_per_seed(truth: dict[str, float]) -> CurvePoints:
        offsets = rng.normal(0, 0.8 * SIGMA, (SEEDS, 1))
        values = saturating(SIZES, **truth) + offsets + rng.normal(0, 0.4 * SIGMA, (SEEDS, len(SIZES)))
        return curve_points(np.tile(SIZES, SEEDS), values.ravel(), runs=runs)

    held = {"seeds apart": 0, "whole runs": 0}
    for _ in range(replicates):
        truth = draw_truth(rng)
        for design, make in (("seeds apart", lambda t: simulate(rng, t)), ("whole runs", one_run_per_seed)):
            a, b = make(truth), make(_slowed(truth, PLANTED))
            interval = measured_gap(a, b, samples_b=float(b.samples[-1])).interval
            held[design] += interval is not None and interval[0] <= PLANTED <= interval[1]
    return {design: count / replicates for design, count in held.items()}


def _chunk(replicate: Replicate, count: int, stream: tuple[int, int]) -> list[tuple[str, str]]:
    rng = np.random.default_rng(stream)
    return [pair for _ in range(count) for pair in replicate(rng)]


def _replicate(rng: np.random.Generator) -> list[tuple[str, str]]:
    """(experiment, verdict) for every experiment on one draw of the truth."""
    truth = draw_truth(rng)
    a = planted_curve("A", simulate(rng, truth))
    b = planted_curve("B", simulate(rng, _slowed(truth, PLANTED)))
    slow = planted_curve("B", simulate(rng, _slowed(truth, FALSE_PLANTED)))
    judged = [
        ("gap_true", judge(CLAIMS["gap"], planted_run(a, b))),
        ("gap_false", judge(CLAIMS["gap"], planted_run(a, slow))),
        ("order_true", judge(CLAIMS["order_true"], planted_run(a, b))),
        ("order_false", judge(CLAIMS["order_false"], planted_run(a, b))),
    ]
    level = float(saturating(LEVEL_AT, **truth))
    for name, centre in (("level_true", level), ("level_false", level + LEVEL_OFF)):
        region = Region.around(centre, LEVEL_TOLERANCE, factor=False)
        judged.append(
            (name, judge(_claim(name, "level", region, objective="A", at=LEVEL_AT), planted_run(a)))
        )
    weak_a = planted_curve("A", simulate(rng, truth, sizes=UNDERPOWERED, seeds=1))
    for name, factor in (("gap_underpowered_true", PLANTED), ("gap_underpowered_false", FALSE_PLANTED)):
        weak_b = planted_curve("B", simulate(rng, _slowed(truth, factor), sizes=UNDERPOWERED, seeds=1))
        judged.append((name, judge(CLAIMS["gap"], planted_run(weak_a, weak_b))))
    return [(name, verdict.verdict) for name, verdict in judged]
