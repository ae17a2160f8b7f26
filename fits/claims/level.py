"""A level claim judged: the curve's alignment at `at` samples. Where that size was measured (to
3 digits), the measured mean with its standard error (the seed scatter, or an imported row's
SE; with one seed and no SE, no interval: a second seed would give one). Elsewhere the laws'
forecast (never an unbounded law past 2x the data: `Forecast.withheld`). With a baseline, the
difference from that baseline's value (`fits.claims.baseline_level`)."""

from fits.claims.baseline_level import against_baseline
from fits.claims.claim import Claim, Verdict
from fits.claims.common import Measured, claim_curve, measured_at, measured_curve, missing_curve, no_estimate
from fits.curve.bands import forecast
from fits.curve.curveset import CurveSet
from fits.curve.level import percent, quantile
from foundation.sizes import format_size

__all__ = ["judge_level", "point_interval"]


def judge_level(claim: Claim, curves: CurveSet, confidence: float) -> Verdict:
    measured = measured_curve(curves, claim, claim.objective)
    if measured is None:
        return missing_curve(claim, claim.objective, curves)
    level = _level(claim, curves, measured, confidence)
    if claim.baseline is None:
        return level
    return against_baseline(claim, curves.baselines, measured.key, level, confidence)


def point_interval(point: Measured, confidence: float) -> tuple[float, float]:
    """The mean's interval: Student's t on the seed scatter's dof, a normal one on a given SE."""
    half = quantile(confidence, point.dof) * point.se
    return point.mean - half, point.mean + half


def _level(claim: Claim, curves: CurveSet, measured, confidence: float) -> Verdict:
    """The curve's level at `at`: the measured mean where measured, else the laws' forecast."""
    point = measured_at(measured, claim.at)
    if point is not None:
        if point.se is None:
            why = f"{point.name} at {format_size(claim.at)} is one seed ({point.mean:.4g}) and no SE"
            return no_estimate(
                claim, [f"{why}: its noise is unknown"], [point.second_seed, "or its value's SE"]
            )
        interval = point_interval(point, confidence)
        basis = f"the measured mean of {point.seeds} seeds at {format_size(claim.at)}"
        if point.dof is None:
            basis = f"the measured value at {format_size(claim.at)} and {point.source}"
        return Verdict(claim, claim.region.decide(interval), point.mean, interval, basis)
    curve = claim_curve(curves, claim, claim.objective)
    if curve is None:
        return missing_curve(claim, claim.objective, curves)
    predicted = forecast(curve.ensemble, claim.at, level=confidence)
    caveats = (
        [f"extrapolated {predicted.extrapolation:.3g}x past the data"] if predicted.extrapolation > 1 else []
    )
    if predicted.withheld:
        why = f"only unbounded laws reach {format_size(claim.at)}, more than 2x past the data"
        missing = [f"runs nearer {format_size(claim.at)}, or a law with a ceiling that fits"]
        return no_estimate(claim, [why], missing, tuple(caveats))
    basis = f"the laws' forecast of the mean ({percent(confidence)} CI over the mixture's draws)"
    return Verdict(
        claim, claim.region.decide(predicted.ci), predicted.prediction, predicted.ci, basis, caveats=caveats
    )
