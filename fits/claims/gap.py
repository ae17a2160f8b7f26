"""A gap claim judged: R = N_B* / N_A*, the samples (or FLOPs) the slower objective B needs for a
level over those the faster A needs. The laws' gap (`fits.curve.gaps`) where it is identified;
where it is withheld (lack of fit, a crossing outside the data, an interval too wide) the
model-free gap read from the seed means (`fits.curve.measured_gap`) when it has an interval; else
a bound, which can only contradict. Seed means are read at every measured size, held-out ones
included: holding out tests a law's forecast, and a reading with no law has nothing to hide them
from."""

import math
from dataclasses import dataclass

from fits.claims.claim import Claim, Outcome, Per, Verdict
from fits.claims.common import NO_ESTIMATE, claim_curve, missing_curve
from fits.curve.bands import forecast
from fits.curve.curveset import CurveFit, CurveSet
from fits.curve.gaps import Gap, sample_gap
from fits.curve.measured_gap import MeasuredGap, measured_gap
from foundation.sizes import format_size

__all__ = ["flops_scale", "judge_gap"]


@dataclass(frozen=True)
class _Reading:
    """What the gap's estimates say, before the verdict gathers its axes and caveats."""

    outcome: Outcome
    value: float | None
    interval: tuple[float, float] | None
    basis: str
    reasons: list[str]
    missing: list[str]
    flags: list[str]


def judge_gap(claim: Claim, curves: CurveSet, confidence: float) -> Verdict:
    a, b = claim_curve(curves, claim, claim.faster), claim_curve(curves, claim, claim.slower)
    if a is None or b is None:
        return missing_curve(claim, claim.faster if a is None else claim.slower, curves)
    law = sample_gap(a.ensemble, b.ensemble, target=claim.at_alignment, samples_b=claim.at, level=confidence)
    if claim.at is not None and forecast(b.ensemble, claim.at).withheld:
        law.identifiable, law.bound = False, None
        law.reasons.append(
            f"{claim.slower}'s level at {format_size(claim.at)} rests on an unbounded law past 2x its data"
        )
    target = None if claim.at else law.target
    means = measured_gap(a.seen, b.seen, target=target, samples_b=claim.at, level=confidence)
    scale = flops_scale(curves, claim, a, b)
    reading = _read(claim, law, means, scale if claim.per is Per.FLOPS else 1.0, confidence)
    return Verdict(
        claim,
        reading.outcome,
        reading.value,
        reading.interval,
        reading.basis,
        reading.reasons,
        _caveats(curves, claim, b, law),
        reading.missing,
        reading.flags,
        axes=_axes(claim, law, means, reading, scale),
        measured={
            "target": means.target,
            "ratio": means.ratio,
            "interval": list(means.interval) if means.interval else None,
            "reasons": means.reasons,
        },
    )


def _read(claim: Claim, law: Gap, means: MeasuredGap, scale: float | None, confidence: float) -> _Reading:
    """The law's gap when identified, else the means', else a bound; `scale` turns samples into
    FLOPs (None: the FLOPs are unknown)."""
    if scale is None:
        why = "no FLOPs were recorded for these runs"
        return _Reading(Outcome.INCONCLUSIVE, None, None, NO_ESTIMATE, [why], ["FLOPs per checkpoint"], [])
    unit = "FLOPs" if claim.per is Per.FLOPS else "samples"
    agree = _agree(law, means)
    flags = [] if agree else ["LAW_AND_MEANS_DISAGREE"]
    reasons = [f"target level {law.target:.4g}"]
    if not agree:
        reasons.append(
            f"the law's interval {_span(law.interval)} and the seed means' "
            f"{_span(means.interval)} do not overlap"
        )
    if law.identifiable:
        interval = (law.interval[0] * scale, law.interval[1] * scale)
        basis = f"the laws' gap in {unit} ({confidence:.0%} over the mixture's draws)"
        return _Reading(claim.region.decide(interval), law.ratio * scale, interval, basis, reasons, [], flags)
    reasons += [f"laws: {why}" for why in law.reasons]
    if means.interval is not None:
        interval = (means.interval[0] * scale, means.interval[1] * scale)
        basis = (
            f"the seed means' gap in {unit} (the laws' gap is withheld; {confidence:.0%} over seed resamples)"
        )
        reasons[0] = f"target level {means.target:.4g} (the seed means')"
        outcome = claim.region.decide(interval)
        return _Reading(outcome, means.ratio * scale, interval, basis, reasons, [], [])
    reasons += [f"seed means: {why}" for why in means.reasons]
    missing = ["both crossings inside the measured sizes with at least 2 seeds, or laws that fit"]
    if law.bound is None:
        return _Reading(Outcome.INCONCLUSIVE, None, None, NO_ESTIMATE, reasons, missing, [])
    ratio = law.bound.ratio * scale
    interval = (ratio, math.inf) if law.bound.side == ">=" else (0.0, ratio)
    outcome = Outcome.CONTRADICTED if claim.region.misses(*interval) else Outcome.INCONCLUSIVE
    basis = f"a bound: R {law.bound.side} {ratio:.3g} in {unit}"
    return _Reading(
        outcome, None, interval, basis, reasons, missing if outcome is Outcome.INCONCLUSIVE else [], []
    )


def _agree(law: Gap, means: MeasuredGap) -> bool:
    if law.interval is None or means.interval is None or not law.identifiable:
        return True
    return not (law.interval[1] < means.interval[0] or means.interval[1] < law.interval[0])


def _span(interval: tuple[float, float] | None) -> str:
    return "none" if interval is None else f"[{interval[0]:.3g}, {interval[1]:.3g}]"


def flops_scale(curves: CurveSet, claim: Claim, a: CurveFit, b: CurveFit) -> float | None:
    """FLOPs of B per sample over A's: R in samples times this is R in FLOPs."""
    per_a = curves.flops_per_sample.get((claim.faster, a.key.model))
    per_b = curves.flops_per_sample.get((claim.slower, b.key.model))
    return per_b / per_a if per_a and per_b else None


def _axes(claim: Claim, law: Gap, means: MeasuredGap, reading: _Reading, scale: float | None) -> dict:
    """The gap on both axes: samples, and FLOPs where the store has them."""
    if claim.per is Per.FLOPS:
        samples = {
            k: _divide(v, scale) for k, v in {"value": reading.value, "interval": reading.interval}.items()
        }
        return {"samples": samples, "flops": {"value": reading.value, "interval": reading.interval}}
    samples = {"value": law.ratio, "interval": law.interval, "bound": str(law.bound) if law.bound else None}
    if not law.identifiable and means.interval is not None:
        samples = {"value": means.ratio, "interval": means.interval, "bound": None}
    flops = {k: _times(v, scale) for k, v in samples.items() if k != "bound"}
    return {"samples": samples, "flops": flops}


def _times(value, scale: float | None):
    if value is None or scale is None:
        return None
    return [v * scale for v in value] if isinstance(value, tuple | list) else value * scale


def _divide(value, scale: float | None):
    return _times(value, 1 / scale if scale else None)


def _caveats(curves: CurveSet, claim: Claim, b: CurveFit, law: Gap) -> list[str]:
    caveats = []
    faster, slower = curves.recipes.get(claim.faster, {}), curves.recipes.get(claim.slower, {})
    differing = sorted(k for k in set(faster) | set(slower) if faster.get(k) != slower.get(k))
    if differing:
        caveats.append(f"recipes differ: {', '.join(differing)}")
    if claim.at is not None and claim.at > b.seen.samples[-1]:
        caveats.append(f"extrapolated: {claim.slower}'s level at {format_size(claim.at)} is past its data")
    if "B_SINGLE_CHECKPOINT" in law.flags:
        caveats.append(f"single checkpoint: {claim.slower} is one checkpoint, not a curve")
    if claim.per is Per.SAMPLES:
        caveats.append("samples, not FLOPs: a JEPA sample is two sequences, NTP has a vocabulary head")
    return caveats
