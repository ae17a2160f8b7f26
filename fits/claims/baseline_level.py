"""A level claim against a baseline: the claim curve's level at `at` minus a baseline model's
value from the store (measured by `orch baselines measure`, or published), on the same metric,
reference and eval set. The baseline's own noise widens the interval: its value +- z SE where it
has an SE (a measured one), none where it has not (a published number has no interval). Pure: the
level's verdict and the run's baselines frame in, a verdict on the difference out."""

from dataclasses import dataclass, replace

import pandas as pd

from fits.claims.claim import Claim, Verdict
from fits.claims.common import no_estimate
from fits.curve.curveset import CurveKey
from fits.curve.level import quantile
from foundation.errors import InputError

__all__ = ["AmbiguousBaseline", "Baseline", "against_baseline", "find_baseline"]


class AmbiguousBaseline(InputError):
    """One baseline name with several published values: which one a claim means is not ours to
    guess (Table 3's 0.184 or a later four-seed mean's 0.168)."""


@dataclass(frozen=True)
class Baseline:
    model: str
    source: str
    value: float
    se: float | None


def find_baseline(
    frame: pd.DataFrame | None, model: str, metric: str, reference: str, eval_set: str
) -> Baseline | None:
    """The baseline's row for these curves: a measured one before a published one (it carries its
    noise), the newest measured where several are stored; a curve point with samples is not a
    model's level. Published rows of one name with different values are an `AmbiguousBaseline`."""
    if frame is None or frame.empty:
        return None
    rows = frame[
        (frame.model == model)
        & (frame.metric == metric)
        & (frame.reference == reference)
        & (frame.eval_set == eval_set)
        & frame.samples.isna()
    ]
    if rows.empty:
        return None
    measured = rows[rows.source == "measured"]
    if measured.empty and rows.value.nunique() > 1:
        values = ", ".join(f"{r.value:.4g} ({r.source})" for r in rows.itertuples())
        raise AmbiguousBaseline(
            f"baseline {model!r} of {metric} on {reference} ({eval_set}) has {len(rows)} published "
            f"values: {values}; give each its own model name in the published CSV and name one in the claim"
        )
    row = (measured if not measured.empty else rows).iloc[-1]
    se = row.get("se")
    return Baseline(model, str(row.source), float(row.value), None if se is None or se != se else float(se))


def against_baseline(
    claim: Claim, baselines: pd.DataFrame | None, key: CurveKey, level: Verdict, confidence: float
) -> Verdict:
    """The level's verdict turned into one on (level - baseline); inconclusive, saying what to
    store, where the baseline is not in the store."""
    found = find_baseline(baselines, claim.baseline, key.metric, key.reference, key.eval_set)
    if found is None:
        where = f"{key.metric} on {key.reference} ({key.eval_set})"
        why = f"no baseline {claim.baseline!r} of {where} in the store"
        fix = f"orch baselines measure FEATURES.npz SWEEP.yaml --name {claim.baseline!r} (or import one)"
        return no_estimate(claim, [why], [fix], level.caveats)
    if level.interval is None:
        wanted = f"{claim.objective}'s level at the claimed size, to compare with {found.model}"
        return replace(level, missing=(*level.missing, wanted))
    spread = 0.0 if found.se is None else quantile(confidence) * found.se
    low, high = level.interval[0] - found.value - spread, level.interval[1] - found.value + spread
    noise = f" +- {spread:.2g}" if found.se is not None else " (published: no interval)"
    basis = f"{level.basis}, minus {found.model}'s {found.value:.4g}{noise} ({found.source})"
    reasons = [*level.reasons, f"the level {level.value:.4g} against {found.model}'s {found.value:.4g}"]
    value = None if level.value is None else level.value - found.value
    return Verdict(claim, claim.region.decide((low, high)), value, (low, high), basis, reasons, level.caveats)
