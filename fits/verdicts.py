"""Each claim judged against a fit run: supported when the whole 95% interval of what it states
lies inside the claimed region, contradicted when the whole interval lies outside it, and
inconclusive otherwise, with the reasons, the caveats that apply and, when inconclusive, what is
missing. Pure: a claim and the run's curves in, a `Verdict` out.

What each kind rests on:
- gap: the laws' gap (`fits.gaps`); where the laws' gap is withheld (lack of fit, a crossing
  outside the data, an interval too wide) the model-free gap read from the seed means
  (`fits.measured_gap`) when it has an interval; else a bound, which can only contradict;
Seed means are read at every measured size, held-out ones included: holding out tests a law's
forecast, and a claim read without a law has nothing to hide them from.
- level: the seed mean where the size was measured, else the laws' forecast (never an unbounded
  law past 2x the data: `Forecast.withheld`);
- order: the smallest difference of seed means over the sizes both measured;
- forecast: the share of held-out cells within seed noise, with its Clopper-Pearson interval.
"""

import math

import numpy as np
from scipy import stats

from fits.bands import forecast
from fits.baseline_level import against_baseline
from fits.claim import Claim, Verdict
from fits.fit import CurvePoints, FitError
from fits.gaps import REACH, Gap, sample_gap
from fits.level import LEVEL, quantile
from fits.measured_gap import MeasuredGap, measured_gap
from fits.results import CurveFit, FitRun
from foundation.errors import did_you_mean
from foundation.sizes import format_size

__all__ = ["check_claims", "claim_curve", "flops_scale", "judge", "seen_points"]

NO_ESTIMATE = "no estimate"  # the basis of a verdict with no value and no interval
SIZE_PRECISION = 0.005  # `at: 24.6K` names the checkpoint at 24,576 samples: sizes are written to 3 digits


def check_claims(claims: tuple[Claim, ...], run: FitRun, objectives: list[str], origin: str) -> None:
    """Every claim names objectives the sweep ran and sizes a law may reach, or a FitError line
    that names `origin` (the claims file), the claim and the fix."""
    sizes = [seen_points(c).samples for c in run.curves]
    low, high = (min(s[0] for s in sizes), max(s[-1] for s in sizes)) if sizes else (1.0, 1.0)
    for claim in claims:
        where = f"{origin}: claim {claim.id!r}"
        for name in claim.objectives:
            if name not in objectives:
                hint = did_you_mean(name, objectives)
                raise FitError(
                    f"{where}: {name!r} is not an objective of {run.sweep}{hint} ({', '.join(objectives)})"
                )
        if claim.at is not None and not low / REACH <= claim.at <= high * REACH:
            raise FitError(
                f"{where}: at {format_size(claim.at)} is more than {REACH:g}x past every size {run.sweep} "
                f"measured ({format_size(low)}..{format_size(high)}); no law reaches so far: give a size "
                "within that reach, or at_alignment"
            )


def judge(claim: Claim, run: FitRun, testbed: bool = False, confidence: float = LEVEL) -> Verdict:
    """The claim's verdict on this run (`testbed`: the sweep trained on the embedded world), its
    interval at `confidence` (the report's 95%; another for calibration, as bench/next.py's 90%)."""
    verdict = _JUDGES[claim.kind](claim, run, confidence)
    if verdict.verdict == "inconclusive" and not verdict.missing:
        verdict.missing.append(
            f"an interval narrower than the claimed region {claim.region}: "
            "more seeds, or sizes nearer the level"
        )
    if testbed:
        verdict.caveats.append("testbed: the embedded synthetic world, not evidence about real data")
    return verdict


def claim_curve(run: FitRun, claim: Claim, objective: str) -> CurveFit | None:
    """The claim's curve of `objective`: its model, reference and eval set, each where given."""
    chosen = [
        c
        for c in run.curves
        if c.key["objective"] == objective
        and all(getattr(claim, k) in (None, c.key[k]) for k in ("model", "reference", "eval_set"))
    ]
    return min(chosen, key=lambda c: (c.key["model"], c.key["reference"], c.key["eval_set"]), default=None)


def seen_points(curve: CurveFit) -> CurvePoints:
    """Every measured point of the curve, held-out cells included."""
    return curve.points if curve.measured is None else curve.measured


def _missing_curve(claim: Claim, objective: str, run: FitRun) -> Verdict:
    skipped = [line for line in run.skipped if line.startswith(f"{objective}/")]
    why = f"no law was fitted for {objective}" + (f" ({skipped[0]})" if skipped else "")
    return Verdict(
        claim, "inconclusive", None, None, NO_ESTIMATE, [why], missing=[f"a fitted curve of {objective}"]
    )


def _judge_gap(claim: Claim, run: FitRun, confidence: float) -> Verdict:
    a, b = claim_curve(run, claim, claim.faster), claim_curve(run, claim, claim.slower)
    if a is None or b is None:
        return _missing_curve(claim, claim.faster if a is None else claim.slower, run)
    law = sample_gap(a.ensemble, b.ensemble, target=claim.at_alignment, samples_b=claim.at, level=confidence)
    withheld = claim.at is not None and forecast(b.ensemble, claim.at).withheld
    if withheld:
        law.identifiable, law.bound = False, None
        law.reasons.append(
            f"{claim.slower}'s level at {format_size(claim.at)} rests on an unbounded law past 2x its data"
        )
    means = measured_gap(
        seen_points(a),
        seen_points(b),
        target=None if claim.at else law.target,
        samples_b=claim.at,
        level=confidence,
    )
    scale = flops_scale(run, claim, a, b) if claim.per == "flops" else 1.0
    verdict = _gap_verdict(claim, law, means, scale, confidence)
    verdict.axes = _gap_axes(run, claim, a, b, law, means, verdict)
    verdict.measured = {
        "target": means.target,
        "ratio": means.ratio,
        "interval": list(means.interval) if means.interval else None,
        "reasons": means.reasons,
    }
    verdict.caveats += _gap_caveats(run, claim, b, law)
    return verdict


def _gap_verdict(
    claim: Claim, law: Gap, means: MeasuredGap, scale: float | None, confidence: float
) -> Verdict:
    """The law's gap when identified, else the means', else a bound; `scale` turns samples into
    FLOPs (None: the FLOPs are unknown)."""
    unit = "FLOPs" if claim.per == "flops" else "samples"
    if scale is None:
        why = "no FLOPs were recorded for these runs"
        return Verdict(
            claim, "inconclusive", None, None, NO_ESTIMATE, [why], missing=["FLOPs per checkpoint"]
        )
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
        return Verdict(
            claim, claim.region.decide(interval), law.ratio * scale, interval, basis, reasons, flags=flags
        )
    reasons += [f"laws: {why}" for why in law.reasons]
    if means.interval is not None:
        interval = (means.interval[0] * scale, means.interval[1] * scale)
        basis = (
            f"the seed means' gap in {unit} (the laws' gap is withheld; {confidence:.0%} over seed resamples)"
        )
        reasons[0] = f"target level {means.target:.4g} (the seed means')"
        return Verdict(claim, claim.region.decide(interval), means.ratio * scale, interval, basis, reasons)
    reasons += [f"seed means: {why}" for why in means.reasons]
    missing = ["both crossings inside the measured sizes with at least 2 seeds, or laws that fit"]
    if law.bound is not None:
        ratio = law.bound.ratio * scale
        interval = (ratio, math.inf) if law.bound.side == ">=" else (0.0, ratio)
        verdict = "contradicted" if claim.region.misses(*interval) else "inconclusive"
        basis = f"a bound: R {law.bound.side} {ratio:.3g} in {unit}"
        return Verdict(
            claim,
            verdict,
            None,
            interval,
            basis,
            reasons,
            missing=[] if verdict != "inconclusive" else missing,
        )
    return Verdict(claim, "inconclusive", None, None, NO_ESTIMATE, reasons, missing=missing)


def _agree(law: Gap, means: MeasuredGap) -> bool:
    if law.interval is None or means.interval is None or not law.identifiable:
        return True
    return not (law.interval[1] < means.interval[0] or means.interval[1] < law.interval[0])


def _span(interval: tuple[float, float] | None) -> str:
    return "none" if interval is None else f"[{interval[0]:.3g}, {interval[1]:.3g}]"


def flops_scale(run: FitRun, claim: Claim, a: CurveFit, b: CurveFit) -> float | None:
    """FLOPs of B per sample over A's: R in samples times this is R in FLOPs."""
    per_a = run.flops_per_sample.get((claim.faster, a.key["model"]))
    per_b = run.flops_per_sample.get((claim.slower, b.key["model"]))
    return per_b / per_a if per_a and per_b else None


def _gap_axes(run, claim, a, b, law: Gap, means: MeasuredGap, verdict: Verdict) -> dict[str, dict]:
    """The gap on both axes: samples, and FLOPs where the store has them."""
    samples = {"value": law.ratio, "interval": law.interval, "bound": str(law.bound) if law.bound else None}
    if not law.identifiable and means.interval is not None:
        samples = {"value": means.ratio, "interval": means.interval, "bound": None}
    if claim.per == "flops":
        scale = flops_scale(run, claim, a, b)
        samples = {
            k: _divide(v, scale) for k, v in {"value": verdict.value, "interval": verdict.interval}.items()
        }
        return {"samples": samples, "flops": {"value": verdict.value, "interval": verdict.interval}}
    scale = flops_scale(run, claim, a, b)
    flops = {k: _times(v, scale) for k, v in samples.items() if k != "bound"}
    return {"samples": samples, "flops": flops}


def _times(value, scale: float | None):
    if value is None or scale is None:
        return None
    return [v * scale for v in value] if isinstance(value, tuple | list) else value * scale


def _divide(value, scale: float | None):
    return _times(value, 1 / scale if scale else None)


def _gap_caveats(run: FitRun, claim: Claim, b: CurveFit, law: Gap) -> list[str]:
    caveats = []
    differing = sorted(
        k
        for k in set(run.recipes.get(claim.faster, {})) | set(run.recipes.get(claim.slower, {}))
        if run.recipes.get(claim.faster, {}).get(k) != run.recipes.get(claim.slower, {}).get(k)
    )
    if differing:
        caveats.append(f"recipes differ: {', '.join(differing)}")
    if claim.at is not None and claim.at > seen_points(b).samples[-1]:
        caveats.append(f"extrapolated: {claim.slower}'s level at {format_size(claim.at)} is past its data")
    if "B_SINGLE_CHECKPOINT" in law.flags:
        caveats.append(f"single checkpoint: {claim.slower} is one checkpoint, not a curve")
    if claim.per == "samples":
        caveats.append("samples, not FLOPs: a JEPA sample is two sequences, NTP has a vocabulary head")
    return caveats


def _judge_level(claim: Claim, run: FitRun, confidence: float) -> Verdict:
    curve = claim_curve(run, claim, claim.objective)
    if curve is None:
        return _missing_curve(claim, claim.objective, run)
    level = _level(claim, curve, confidence)
    return level if claim.baseline is None else against_baseline(claim, run, curve.key, level, confidence)


def _level(claim: Claim, curve: CurveFit, confidence: float) -> Verdict:
    """The curve's level at `at`: the seed mean where measured, else the laws' forecast."""
    points = seen_points(curve)
    hit = np.flatnonzero(np.isclose(points.samples, claim.at, rtol=SIZE_PRECISION))
    if hit.size:
        i = int(hit[0])
        half = quantile(confidence, points.pooled_df) * float(points.sigma[i])
        mean = float(points.mean[i])
        basis = f"the measured mean of {int(points.seeds[i])} seeds at {format_size(claim.at)}"
        return Verdict(
            claim, claim.region.decide((mean - half, mean + half)), mean, (mean - half, mean + half), basis
        )
    predicted = forecast(curve.ensemble, claim.at, level=confidence)
    caveats = (
        [f"extrapolated {predicted.extrapolation:.3g}x past the data"] if predicted.extrapolation > 1 else []
    )
    if predicted.withheld:
        why = f"only unbounded laws reach {format_size(claim.at)}, more than 2x past the data"
        missing = [f"runs nearer {format_size(claim.at)}, or a law with a ceiling that fits"]
        return Verdict(claim, "inconclusive", None, None, NO_ESTIMATE, [why], caveats, missing)
    basis = f"the laws' forecast of the mean ({confidence:.0%} CI over the mixture's draws)"
    verdict = Verdict(claim, claim.region.decide(predicted.ci), predicted.prediction, predicted.ci, basis)
    verdict.caveats = caveats
    return verdict


def _judge_order(claim: Claim, run: FitRun, confidence: float) -> Verdict:
    high, low = claim_curve(run, claim, claim.above), claim_curve(run, claim, claim.below)
    if high is None or low is None:
        return _missing_curve(claim, claim.above if high is None else claim.below, run)
    above, below = seen_points(high), seen_points(low)
    shared, i, j = np.intersect1d(above.samples, below.samples, return_indices=True)
    if not shared.size:
        why = "no size was measured for both"
        return Verdict(
            claim, "inconclusive", None, None, NO_ESTIMATE, [why], missing=["a size both measured"]
        )
    gaps = above.mean[i] - below.mean[j]
    se = np.hypot(above.sigma[i], below.sigma[j])
    half = quantile(confidence, min(above.pooled_df, below.pooled_df)) * se
    interval = (float(np.min(gaps - half)), float(np.min(gaps + half)))
    worst = int(np.argmin(gaps))
    reasons = [
        f"{shared.size} sizes both measured; the smallest difference is at {format_size(shared[worst])}"
    ]
    basis = f"the smallest difference of seed means, {claim.above} minus {claim.below}"
    verdict = Verdict(claim, claim.region.decide(interval), float(gaps.min()), interval, basis, reasons)
    if verdict.verdict == "inconclusive":
        verdict.missing.append(
            f"a difference at {format_size(shared[worst])} beyond seed noise: more seeds there (the "
            "claim holds at every size both measured, where the curves start level too)"
        )
    return verdict


def _judge_forecast(claim: Claim, run: FitRun, confidence: float) -> Verdict:
    cells = [
        cell
        for curve in run.curves
        if claim.objective in (None, curve.key["objective"])
        and all(getattr(claim, k) in (None, curve.key[k]) for k in ("model", "reference", "eval_set"))
        for cell in curve.held_out
    ]
    if not cells:
        why = "the fit held out no measured cell"
        missing = ["held-out runs: holdout.samples_above in the sweep file, or --holdout"]
        return Verdict(claim, "inconclusive", None, None, NO_ESTIMATE, [why], missing=missing)
    hits = sum(cell.within_seed_noise for cell in cells)
    interval = _clopper_pearson(hits, len(cells), confidence)
    basis = (
        f"{hits} of {len(cells)} held-out cells within their forecasts' seed noise "
        f"(Clopper-Pearson {confidence:.0%})"
    )
    return Verdict(claim, claim.region.decide(interval), hits / len(cells), interval, basis)


def _clopper_pearson(hits: int, count: int, level: float) -> tuple[float, float]:
    tail = (1 - level) / 2
    low = float(stats.beta.ppf(tail, hits, count - hits + 1)) if hits else 0.0
    high = float(stats.beta.ppf(1 - tail, hits + 1, count - hits)) if hits < count else 1.0
    return low, high


_JUDGES = {"gap": _judge_gap, "level": _judge_level, "order": _judge_order, "forecast": _judge_forecast}
