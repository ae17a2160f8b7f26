"""An order claim judged: `above` aligns higher than `below` at every size both measured; the
value is the smallest difference of their seed means, with its t interval there."""

import numpy as np

from fits.claims.claim import Claim, Outcome, Verdict
from fits.claims.common import claim_curve, missing_curve, no_estimate
from fits.curve.curveset import CurveSet
from fits.curve.level import quantile
from foundation.sizes import format_size

__all__ = ["judge_order"]


def judge_order(claim: Claim, curves: CurveSet, confidence: float) -> Verdict:
    high, low = claim_curve(curves, claim, claim.above), claim_curve(curves, claim, claim.below)
    if high is None or low is None:
        return missing_curve(claim, claim.above if high is None else claim.below, curves)
    above, below = high.seen, low.seen
    shared, i, j = np.intersect1d(above.samples, below.samples, return_indices=True)
    if not shared.size:
        return no_estimate(claim, ["no size was measured for both"], ["a size both measured"])
    gaps = above.mean[i] - below.mean[j]
    se = np.hypot(above.sigma[i], below.sigma[j])
    half = quantile(confidence, min(above.pooled_df, below.pooled_df)) * se
    interval = (float(np.min(gaps - half)), float(np.min(gaps + half)))
    worst = int(np.argmin(gaps))
    reasons = [
        f"{shared.size} sizes both measured; the smallest difference is at {format_size(shared[worst])}"
    ]
    basis = f"the smallest difference of seed means, {claim.above} minus {claim.below}"
    outcome = claim.region.decide(interval)
    missing = []
    if outcome is Outcome.INCONCLUSIVE:
        missing.append(
            f"a difference at {format_size(shared[worst])} beyond seed noise: more seeds there (the "
            "claim holds at every size both measured, where the curves start level too)"
        )
    return Verdict(claim, outcome, float(gaps.min()), interval, basis, reasons, missing=missing)
