"""The verdicts on planted truths: how often a true claim is supported and a false one
contradicted, when the claims are judged exactly as `orch check` judges them. `bench/fits.py`
prints these rates with their binomial SEs; the slow tests hold them to the goals.

Each replicate draws a saturating truth for A (`fits.planted.draw_truth`) and makes B from it
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

from dataclasses import dataclass, field

import numpy as np

from fits.claim import Claim, Region
from fits.ensemble import build_ensemble
from fits.fit import CurvePoints, fit_laws, law_weights
from fits.laws import saturating
from fits.planted import SIZES, draw_truth, simulate
from fits.results import CurveFit, FitRun, FitSettings
from fits.verdicts import judge

__all__ = ["CLAIMS", "GOALS", "Rates", "planted_curve", "planted_run", "verdict_rates"]

PLANTED, FALSE_PLANTED = 42.0, 10.0
UNDERPOWERED = SIZES[:7]  # 145K .. 9.3M: 64x, about 1.5 times the planted gap
LEVEL_AT = int(SIZES[-1] * 2)
LEVEL_TOLERANCE, LEVEL_OFF = 0.015, 0.04


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
        share = self.share(experiment, verdict)
        return float(np.sqrt(share * (1 - share) / self.replicates))


def planted_curve(name: str, points: CurvePoints) -> CurveFit:
    fits = fit_laws(points)
    ensemble = build_ensemble(points, fits, law_weights(fits), (0.0, 1.0))
    key = {"objective": name, "model": "m", "metric": "mutual_knn@10", "reference": "r", "eval_set": "e"}
    return CurveFit(key, points, fits, ensemble, None, [], [])


def planted_run(*curves: CurveFit) -> FitRun:
    return FitRun("planted", "planted", FitSettings(), curves=list(curves))


def _slowed(truth: dict[str, float], factor: float) -> dict[str, float]:
    return dict(truth, b=truth["b"] * factor ** truth["alpha"])


def verdict_rates(replicates: int, seed: int = 0) -> Rates:
    """Every experiment above, `replicates` times, from one seed."""
    rng = np.random.default_rng(seed)
    rates = Rates(replicates)
    for _ in range(replicates):
        truth = draw_truth(rng)
        a = planted_curve("A", simulate(rng, truth))
        b = planted_curve("B", simulate(rng, _slowed(truth, PLANTED)))
        slow = planted_curve("B", simulate(rng, _slowed(truth, FALSE_PLANTED)))
        rates.add("gap_true", judge(CLAIMS["gap"], planted_run(a, b)).verdict)
        rates.add("gap_false", judge(CLAIMS["gap"], planted_run(a, slow)).verdict)
        rates.add("order_true", judge(CLAIMS["order_true"], planted_run(a, b)).verdict)
        rates.add("order_false", judge(CLAIMS["order_false"], planted_run(a, b)).verdict)
        level = float(saturating(LEVEL_AT, **truth))
        for name, centre in (("level_true", level), ("level_false", level + LEVEL_OFF)):
            region = Region.around(centre, LEVEL_TOLERANCE, factor=False)
            claim = _claim(name, "level", region, objective="A", at=LEVEL_AT)
            rates.add(name, judge(claim, planted_run(a)).verdict)
        weak_a = planted_curve("A", simulate(rng, truth, sizes=UNDERPOWERED, seeds=1))
        for name, factor in (("gap_underpowered_true", PLANTED), ("gap_underpowered_false", FALSE_PLANTED)):
            weak_b = planted_curve("B", simulate(rng, _slowed(truth, factor), sizes=UNDERPOWERED, seeds=1))
            rates.add(name, judge(CLAIMS["gap"], planted_run(weak_a, weak_b)).verdict)
    return rates
