"""A level claim judged: the curve's alignment at `at` samples, the measured mean of its seeds
where that size was measured (to 3 digits), else the laws' forecast (never an unbounded law past
2x the data: `Forecast.withheld`); with a baseline, the difference from that baseline's value
(`fits.claims.baseline_level`)."""

import numpy as np

from fits.claims.baseline_level import against_baseline
from fits.claims.claim import Claim, Verdict
from fits.claims.common import SIZE_PRECISION, claim_curve, missing_curve, no_estimate
from fits.curve.bands import forecast
from fits.curve.curveset import CurveFit, CurveSet
from fits.curve.level import quantile
from foundation.sizes import format_size

__all__ = ["judge_level"]


def judge_level(claim: Claim, curves: CurveSet, confidence: float) -> Verdict:
    curve = claim_curve(curves, claim, claim.objective)
    if curve is None:
        return missing_curve(claim, claim.objective, curves)
    level = _level(claim, curve, confidence)
    if claim.baseline is None:
        return level
    return against_baseline(claim, curves.baselines, curve.key, level, confidence)


def _level(claim: Claim, curve: CurveFit, confidence: float) -> Verdict:
    """The curve's level at `at`: the seed mean where measured, else the laws' forecast."""
    points = curve.seen
    hit = np.flatnonzero(np.isclose(points.samples, claim.at, rtol=SIZE_PRECISION))
    if hit.size:
        i = int(hit[0])
        half = quantile(confidence, points.pooled_df) * float(points.sigma[i])
        mean = float(points.mean[i])
        interval = (mean - half, mean + half)
        basis = f"the measured mean of {int(points.seeds[i])} seeds at {format_size(claim.at)}"
        return Verdict(claim, claim.region.decide(interval), mean, interval, basis)
    predicted = forecast(curve.ensemble, claim.at, level=confidence)
    caveats = (
        [f"extrapolated {predicted.extrapolation:.3g}x past the data"] if predicted.extrapolation > 1 else []
    )
    if predicted.withheld:
        why = f"only unbounded laws reach {format_size(claim.at)}, more than 2x past the data"
        missing = [f"runs nearer {format_size(claim.at)}, or a law with a ceiling that fits"]
        return no_estimate(claim, [why], missing, tuple(caveats))
    basis = f"the laws' forecast of the mean ({confidence:.0%} CI over the mixture's draws)"
    return Verdict(
        claim, claim.region.decide(predicted.ci), predicted.prediction, predicted.ci, basis, caveats=caveats
    )
