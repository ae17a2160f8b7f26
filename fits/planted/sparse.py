"""Verdicts on the evidence a paper's reader holds: each objective measured at 1 to 4 of the
preprint's sizes with 1 or 2 seeds and no SE, as `orch import` takes a paper's points, and the
paper's claim judged as `orch check` judges it: "A reaches B's level at 900M with 42x fewer
samples, within x2". Each replicate draws a saturating truth for A
(`fits.planted.procedure.draw_truth`) and slows it for B by a true 42x and by a false 10x.

A curve with more sizes than a law's parameters gets its laws, as on an imported sweep; one
with fewer keeps its points (`Unfitted`). The goal is the issue's: at most 5% wrong verdicts
for each truth in each design; how many are decided at all is reported beside it, since a
design this sparse should mostly say inconclusive.
"""

import numpy as np

from fits.claims.claim import Claim, Outcome
from fits.claims.verdicts import judge
from fits.curve.curveset import CurveFit, CurveKey, CurveSet, Unfitted
from fits.curve.fit import FitError, curve_points
from fits.curve.laws import saturating
from fits.planted.calibration import FALSE_PLANTED, GAP, PLANTED, Rates, planted_curve, verdict_rates
from fits.planted.procedure import SIGMA, draw_truth

__all__ = ["DESIGNS", "TRUTHS", "WRONG", "WRONG_AT_MOST", "design_name", "sparse_rates"]

AT = 900e6  # B's size the claim reads its level at (NTP's one checkpoint)
A_SIZES = (1.77e6, 6.18e6, 21.6e6, 75e6)  # the preprint's sizes around where A meets that level
B_SIZES = (21.6e6, 75e6, 260e6, 900e6)
SIZE_COUNTS, SEED_COUNTS = (1, 2, 3, 4), (1, 2)
DESIGNS = tuple((sizes, seeds) for sizes in SIZE_COUNTS for seeds in SEED_COUNTS)
TRUTHS = {"true 42x": PLANTED, "false 10x": FALSE_PLANTED}
WRONG = {"true 42x": Outcome.CONTRADICTED, "false 10x": Outcome.SUPPORTED}
WRONG_AT_MOST = 0.05
CLAIM = Claim(
    id="gap", kind="gap", says="gap", source="planted", region=GAP, faster="A", slower="B", at=int(AT)
)


def design_name(sizes: int, seeds: int, truth: str) -> str:
    """An experiment's name in the counts: '2 sizes x 1 seed, true 42x'."""
    return f"{sizes} size{'s' * (sizes > 1)} x {seeds} seed{'s' * (seeds > 1)}, {truth}"


def _measured(name: str, rng: np.random.Generator, truth: dict, sizes: tuple[float, ...], seeds: int):
    """A curve as an import of these points gives it: laws where its sizes allow, else its points."""
    samples = np.repeat(sizes, seeds)
    points = curve_points(samples, saturating(samples, **truth) + rng.normal(0, SIGMA, samples.size))
    try:
        return planted_curve(name, points)
    except FitError as error:
        return Unfitted(CurveKey(name, "m", "mutual_knn@10", "r", "e"), points, str(error))


def _curve_set(*curves: CurveFit | Unfitted) -> CurveSet:
    fitted = tuple(c for c in curves if isinstance(c, CurveFit))
    return CurveSet(fitted, unfitted=tuple(c for c in curves if isinstance(c, Unfitted)))


def _replicate(rng: np.random.Generator) -> list[tuple[str, str]]:
    """(experiment, verdict) for every design and truth on one draw of A's truth."""
    truth = draw_truth(rng)
    judged = []
    for sizes, seeds in DESIGNS:
        a = _measured("A", rng, truth, A_SIZES[-sizes:] if sizes > 1 else (21.6e6,), seeds)
        for name, factor in TRUTHS.items():
            slowed = dict(truth, b=truth["b"] * factor ** truth["alpha"])
            b = _measured("B", rng, slowed, B_SIZES[-sizes:], seeds)
            judged.append((design_name(sizes, seeds, name), judge(CLAIM, _curve_set(a, b)).verdict))
    return judged


def sparse_rates(replicates: int, seed: int = 0, workers: int = 1) -> Rates:
    """Every design and truth above, `replicates` times (`verdict_rates`' chunked streams)."""
    return verdict_rates(replicates, seed, workers, replicate=_replicate)
