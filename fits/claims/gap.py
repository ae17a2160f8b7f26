"""A gap claim judged: R = N_B* / N_A*, the samples (or FLOPs) the slower objective B needs for a
level over those the faster A needs. The laws' gap (`fits.curve.gaps`) where it is identified;
where it is withheld (lack of fit, a crossing outside the data, an interval too wide) the
model-free gap read from the seed means (`fits.curve.measured_gap`) when it has an interval; else
a bound, which can only contradict. Seed means are read at every measured size, held-out ones
included: holding out tests a law's forecast, and a reading with no law has nothing to hide them
from."""

import math
from dataclasses import dataclass

import numpy as np

from fits.claims.claim import Claim, Kind, Outcome, Per, Verdict
from fits.claims.common import NO_ESTIMATE, Measured, claim_curve, measured_at, measured_curve, missing_curve
from fits.curve.bands import forecast
from fits.curve.curveset import CurveFit, CurveSet, Unfitted
from fits.curve.gaps import Gap, sample_gap
from fits.curve.level import percent, quantile
from fits.curve.measured_gap import MeasuredGap, measured_gap
from foundation.sizes import format_size

__all__ = ["LAWS_GAP", "SEED_MEANS_GAP", "flops_scale", "judge_gap", "reads_seed_means"]

LAWS_GAP = "the laws' gap"  # a verdict's basis starts so when the laws' gap carries it
SEED_MEANS_GAP = "the seed means' gap"  # ... when the model-free gap from the seed means does


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
        return _without_laws(claim, curves, confidence)
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
        basis = f"{LAWS_GAP} in {unit} ({percent(confidence)} over the mixture's draws)"
        return _Reading(claim.region.decide(interval), law.ratio * scale, interval, basis, reasons, [], flags)
    reasons += [f"laws: {why}" for why in law.reasons]
    if means.interval is not None:
        interval = (means.interval[0] * scale, means.interval[1] * scale)
        basis = (
            f"{SEED_MEANS_GAP} in {unit} ({LAWS_GAP} is withheld; {percent(confidence)} over seed resamples)"
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


def reads_seed_means(verdict: Verdict) -> bool:
    """Whether a gap's verdict reads the seed means' gap, or will once their noise is measured:
    the laws' gap withheld, B measured at the claim's `at`, and A's means crossing its level
    between two measured sizes."""
    if verdict.claim.kind is not Kind.GAP or verdict.claim.at is None or verdict.basis.startswith(LAWS_GAP):
        return False
    return verdict.measured is not None and verdict.measured.get("ratio") is not None


def _without_laws(claim: Claim, curves: CurveSet, confidence: float) -> Verdict:
    """A gap where a curve has no law: A's laws against B's single checkpoint at `at` where A has
    laws and B's level there has an SE; else a bound from the single checkpoints (`_bound`);
    else no estimate, with the bound the point values suggest."""
    a_seen, b_seen = measured_curve(curves, claim, claim.faster), measured_curve(curves, claim, claim.slower)
    if a_seen is None or b_seen is None:
        return missing_curve(claim, claim.faster if a_seen is None else claim.slower, curves)
    reasons = [
        f"no law was fitted for {c.key.objective}/{c.key.model} ({c.why})"
        for c in (a_seen, b_seen)
        if isinstance(c, Unfitted)
    ]
    scale = flops_scale(curves, claim, a_seen, b_seen)
    unit = scale if claim.per is Per.FLOPS else 1.0
    caveats = _checkpoint_caveats(claim, b_seen)
    if unit is None:
        why = "no FLOPs were recorded for these runs"
        return _no_estimate(claim, [*reasons, why], ["FLOPs per checkpoint"], caveats)
    level = measured_at(b_seen, claim.at) if claim.at is not None else None
    a = claim_curve(curves, claim, claim.faster)
    if a is not None and level is not None and level.se is not None:
        gap = sample_gap(a.ensemble, None, level.mean, level.samples, target_sd=level.se, level=confidence)
        if gap.interval is not None and gap.identifiable:
            interval = (gap.interval[0] * unit, gap.interval[1] * unit)
            checkpoint = f"{claim.slower}'s single checkpoint at {format_size(level.samples)}"
            basis = f"{claim.faster}'s laws against {checkpoint} ({level.source})"
            return Verdict(
                claim, claim.region.decide(interval), gap.ratio * unit, interval, basis, reasons, caveats
            )
        reasons += [f"laws: {why}" for why in gap.reasons]
    found = _bound(claim, a_seen, level, confidence)
    if found is None:
        wanted = [
            f"a law for {c.key.objective}/{c.key.model}: more sizes"
            for c in (a_seen, b_seen)
            if isinstance(c, Unfitted)
        ]
        if claim.at is not None and level is None:
            reasons.append(f"not measured: {claim.slower} at {format_size(claim.at)}")
        return _no_estimate(claim, reasons, wanted or ["runs nearer the level"], caveats)
    interval, words, missing = found
    if interval is None:  # the points suggest a bound their noise cannot confirm
        return _no_estimate(claim, [*reasons, words], missing, caveats)
    unit_name = "FLOPs" if claim.per is Per.FLOPS else "samples"
    scaled = (interval[0] * unit, interval[1] * unit)
    side, end = ("<=", scaled[1]) if scaled[0] == 0 else (">=", scaled[0])
    basis = f"a bound from single checkpoints: R {side} {end:.3g}x in {unit_name}"
    outcome = claim.region.decide(scaled)
    missing = [] if outcome is not Outcome.INCONCLUSIVE else ["a curve of each near the level, with seeds"]
    return Verdict(claim, outcome, None, scaled, basis, [*reasons, words], (*caveats, MONOTONE), missing)


MONOTONE = "a bound from checkpoints assumes alignment rises with samples"


def _bound(
    claim: Claim, a: CurveFit | Unfitted, level: Measured | None, confidence: float
) -> tuple[tuple[float, float] | None, str, list[str]] | None:
    """R bounded by single checkpoints (Table 3's "0.109 at 21.6M against 0.111 at 900M"): A
    below B's level at `at` at its largest size S, beyond the two points' noise, has not reached
    it there, so N_A* > S and R < at / S; A above it at its smallest size, beyond noise, reached
    it by then, so R >= at / S. (bound interval, the words, what would confirm it); the interval
    is None where the points suggest a bound that nothing measures their noise for. None: no
    bound (B's level unmeasured, or A within noise of it)."""
    if level is None:
        return None
    samples = a.seen.samples
    for point, side in ((measured_at(a, samples[-1]), "<="), (measured_at(a, samples[0]), ">=")):
        above = point.mean - level.mean
        if (above >= 0) if side == "<=" else (above <= 0):
            continue
        ratio = level.samples / point.samples
        where = "below" if side == "<=" else "above"
        words = (
            f"{point.name} {point.mean:.4g} at {format_size(point.samples)} lies {where} "
            f"{level.name}'s {level.mean:.4g} at {format_size(level.samples)}: R {side} {ratio:.3g}x"
        )
        unknown = [p for p in (point, level) if p.se is None]
        if unknown:
            missing = [p.second_seed for p in unknown] + ["or the SEs of their values"]
            return (
                None,
                f"{words} as the point values suggest; with no noise estimate for them, not a bound",
                missing,
            )
        dofs = [p.dof for p in (point, level) if p.dof is not None]
        if abs(above) <= quantile(confidence, min(dofs) if dofs else None) * float(
            np.hypot(point.se, level.se)
        ):
            continue  # within the points' noise: no bound this way
        interval = (0.0, ratio) if side == "<=" else (ratio, math.inf)
        return interval, f"{words} (beyond the two points' noise: {point.source}; {level.source})", []
    return None


def _checkpoint_caveats(claim: Claim, b: CurveFit | Unfitted) -> tuple[str, ...]:
    caveats = []
    if len(b.seen.samples) == 1:
        caveats.append(f"single checkpoint: {claim.slower} is one checkpoint, not a curve")
    if claim.per is Per.SAMPLES:
        caveats.append("samples, not FLOPs: a JEPA sample is two sequences, NTP has a vocabulary head")
    return tuple(caveats)


def _no_estimate(claim: Claim, reasons: list[str], missing: list[str], caveats: tuple[str, ...]) -> Verdict:
    return Verdict(claim, Outcome.INCONCLUSIVE, None, None, NO_ESTIMATE, reasons, caveats, missing)


def _agree(law: Gap, means: MeasuredGap) -> bool:
    if law.interval is None or means.interval is None or not law.identifiable:
        return True
    return not (law.interval[1] < means.interval[0] or means.interval[1] < law.interval[0])


def _span(interval: tuple[float, float] | None) -> str:
    return "none" if interval is None else f"[{interval[0]:.3g}, {interval[1]:.3g}]"


def flops_scale(
    curves: CurveSet, claim: Claim, a: CurveFit | Unfitted, b: CurveFit | Unfitted
) -> float | None:
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
