"""Sample gaps between two objectives' curves (`--gap A:B`): the laws' gap beside the model-free
gap of the seed means at the same level (a curve with no law has only the latter); and the naive
gaps between published single checkpoints, each with the caveats that apply."""

from dataclasses import asdict

import numpy as np
import pandas as pd

from fits.curve.curveset import CurveFit, CurveSet, Unfitted
from fits.curve.gaps import Bound, Gap, sample_gap
from fits.curve.measured_gap import measured_gap
from fits.curve.settings import FitOptions, GapPair
from fits.run.results import GapEstimate

__all__ = ["gap_estimates", "published_gaps"]

PAIR = ("model", "metric", "reference", "eval_set")  # what two compared curves share


def _find(curves: CurveSet, objective: str, key: dict) -> CurveFit | Unfitted | None:
    """The measured curve of `objective` on the pair's model, reference and eval set, with a law
    or without."""
    return curves.find_measured(objective, key["model"], key["reference"], key["eval_set"])


def _differing(recipes: dict[str, dict], faster: str, slower: str) -> list[str]:
    """The recipe fields on which the two objectives' trials differ."""
    a, b = recipes.get(faster, {}), recipes.get(slower, {})
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def gap_estimates(
    curves: CurveSet,
    pair: GapPair,
    chosen: pd.DataFrame,
    per_sample: dict[str, float],
    recipes: dict[str, dict],
    options: FitOptions,
) -> list[GapEstimate]:
    """R = N_B* / N_A* for every (model, reference, eval set) both objectives were measured on:
    the laws' gap where both curves have laws, and the seed means' gap at the same level."""
    faster, slower = pair.faster, pair.slower
    differing = _differing(recipes, faster, slower)
    observed_b = chosen[
        (chosen.objective == slower) & ~(chosen.held_out | chosen.data_size.isin(options.holdout))
    ]
    out = []
    for values, group in observed_b.groupby(list(PAIR)):
        key = dict(zip(PAIR, values, strict=True))
        curve_a, curve_b = _find(curves, faster, key), _find(curves, slower, key)
        if curve_a is None:
            continue
        gap = _gap(curve_a, curve_b, group, options)
        means = measured_gap(curve_a.seen, curve_b.seen, target=gap.target) if curve_b is not None else None
        flags = gap.flags + ([f"RECIPES_DIFFER:{','.join(differing)}"] if differing else [])
        flags.append("SAMPLES_NOT_FLOPS")
        random_init = getattr(curve_a, "random_init", None)  # a curve without a law has none drawn
        if random_init is not None and gap.target <= random_init:
            flags.append("TARGET_AT_OR_BELOW_A_RANDOM_INIT")
        if options.bootstrap:
            flags.append(f"BOOTSTRAP:{options.bootstrap}")
        if not gap.identifiable:
            flags.append("NOT_IDENTIFIABLE")
        known = gap.ratio is not None and faster in per_sample and slower in per_sample
        out.append(
            GapEstimate(
                faster=faster,
                slower=slower,
                **key,
                target=gap.target,
                samples_b=gap.samples_b,
                samples_a=gap.samples_a,
                ratio=gap.ratio,
                ci=gap.interval,
                identifiable=gap.identifiable,
                reasons=gap.reasons,
                bound=gap.bound,
                flops_ratio=gap.ratio * per_sample[slower] / per_sample[faster] if known else None,
                ratio_curve=[asdict(row) for row in gap.by_level],
                flags=flags,
                means=asdict(means) if means is not None else None,
            )
        )
    return out


def _gap(
    curve_a: CurveFit | Unfitted,
    curve_b: CurveFit | Unfitted | None,
    group: pd.DataFrame,
    options: FitOptions,
) -> Gap:
    """The gap at `--at-alignment`, at B's level at `--gap-at`, or at the default target; where A
    has no law, none (at B's last checkpoint), with A's reason."""
    if isinstance(curve_a, Unfitted):
        last = group[group.samples_seen == group.samples_seen.max()].value
        target = options.at_alignment if options.at_alignment is not None else float(last.mean())
        why = f"no law for {curve_a.key.objective}: {curve_a.why}"
        return Gap(target, None, float(group.samples_seen.max()), None, None, False, [why])
    if not isinstance(curve_b, CurveFit):  # too few points for a law: B is its last checkpoint, observed
        last = group[group.samples_seen == group.samples_seen.max()].value
        error = float(last.std(ddof=1) / np.sqrt(len(last))) if len(last) > 1 else 0.0
        return sample_gap(
            curve_a.ensemble, None, float(last.mean()), float(group.samples_seen.max()), target_sd=error
        )
    if options.gap_at is not None:
        return sample_gap(curve_a.ensemble, curve_b.ensemble, samples_b=float(options.gap_at))
    return sample_gap(curve_a.ensemble, curve_b.ensemble, target=options.at_alignment)


def published_gaps(baselines: pd.DataFrame, pair: GapPair, metric: str) -> list[GapEstimate]:
    """The naive gap between published single checkpoints of the same encoder size (the last
    word of the model name): S_B / S_A, with no interval and every caveat that applies."""
    faster, slower = pair.faster, pair.slower
    if baselines.empty:
        return []
    rows = baselines[(baselines.metric == metric) & baselines.samples.notna()]
    out = []
    for b in rows[rows.objective == slower].itertuples():
        for a in rows[rows.objective == faster].itertuples():
            same = (a.reference, a.eval_set, a.model.split()[-1]) == (
                b.reference,
                b.eval_set,
                b.model.split()[-1],
            )
            if not same:
                continue
            flags = ["PUBLISHED", "A_SINGLE_CHECKPOINT", "B_SINGLE_CHECKPOINT"]
            flags += ["SAMPLES_NOT_FLOPS", "RECIPES_UNKNOWN"]
            # A below B's level at S_A means N_A* > S_A: the ratio bounds R from above; A above it
            # means N_A* <= S_A: a bound from below.
            if a.value < b.value:
                flags.append(f"UPPER_BOUND:A={a.value:.3g}<a*={b.value:.3g}")
            elif a.value > b.value:
                flags.append(f"LOWER_BOUND:A={a.value:.3g}>a*={b.value:.3g}")
            out.append(
                GapEstimate(
                    faster=faster,
                    slower=slower,
                    model=f"{a.model} / {b.model}",
                    metric=metric,
                    reference=b.reference,
                    eval_set=b.eval_set,
                    target=float(b.value),
                    samples_b=float(b.samples),
                    samples_a=float(a.samples),
                    ratio=float(b.samples / a.samples),
                    ci=None,
                    identifiable=False,
                    reasons=["published single checkpoints: no curve to invert, recipes unknown"],
                    bound=_published_bound(a.value, b.value, float(b.samples / a.samples)),
                    flops_ratio=None,
                    ratio_curve=[],
                    flags=[*flags, f"SOURCE:{b.source}"],
                )
            )
    return out


def _published_bound(value_a: float, value_b: float, ratio: float) -> Bound | None:
    """A below B's level at S_A means N_A* > S_A: the ratio bounds R from above; above it, from below."""
    if value_a == value_b:
        return None
    return Bound("<=" if value_a < value_b else ">=", ratio)
