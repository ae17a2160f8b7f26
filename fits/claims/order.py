"""An order claim judged: `above` aligns higher than `below` at every size both measured (the
value is the smallest difference of their seed means, with its interval there), or at the one
size `at` names (`fits.claims.difference`, its region at least 0). A difference rests on the
points' standard errors (the seed scatter, or imported rows' SEs): where one side has none,
there is no interval, and a second seed there would give one.

Over m sizes the two ends of the smallest difference's interval are not alike. Its lower end,
the smallest of the sizes' lower bounds, needs every size above 0 to support the claim, so each
size at the claim's confidence makes it hold at that confidence. Its upper end falls below 0
when any one size's does, a chance that grows with m: each size's upper bound is taken at
1 - (1 - confidence) / m (Bonferroni), so a contradiction across 13 sizes is as rare as at one."""

import numpy as np

from fits.claims.claim import Claim, Outcome, Verdict
from fits.claims.common import Measured, measured_at, measured_curve, missing_curve, no_estimate
from fits.claims.difference import judge_difference
from fits.curve.curveset import CurveSet
from fits.curve.level import quantile
from foundation.sizes import format_size

__all__ = ["judge_order", "order_quantiles"]


def judge_order(claim: Claim, curves: CurveSet, confidence: float) -> Verdict:
    if claim.at is not None:
        return judge_difference(claim, curves, confidence)
    high, low = measured_curve(curves, claim, claim.above), measured_curve(curves, claim, claim.below)
    if high is None or low is None:
        return missing_curve(claim, claim.above if high is None else claim.below, curves)
    shared = np.intersect1d(high.seen.samples, low.seen.samples)
    if not shared.size:
        return no_estimate(claim, ["no size was measured for both"], ["a size both measured"])
    pairs = [(measured_at(high, s), measured_at(low, s)) for s in shared]
    gaps = np.array([a.mean - b.mean for a, b in pairs])
    worst = int(np.argmin(gaps))
    where = f"the smallest difference is at {format_size(shared[worst])}"
    reasons = [f"{shared.size} sizes both measured; {where}"]
    unknown = [p for pair in pairs for p in pair if p.se is None]
    if unknown:
        first = unknown[0]
        why = f"{first.name} at {format_size(first.samples)} is one seed and no SE: its noise is unknown"
        return no_estimate(claim, [*reasons, why], [_second_seeds(pairs[worst])])
    se = np.array([np.hypot(a.se, b.se) for a, b in pairs])
    below, above = order_quantiles(confidence, _dof(pairs), shared.size)
    interval = (float(np.min(gaps - below * se)), float(np.min(gaps + above * se)))
    basis = f"the smallest difference of seed means, {claim.above} minus {claim.below}"
    if shared.size > 1:
        basis += f" (its upper end allows for the {shared.size} sizes read: Bonferroni)"
    outcome = claim.region.decide(interval)
    missing = []
    if outcome is Outcome.INCONCLUSIVE:
        missing.append(
            f"a difference at {format_size(shared[worst])} beyond seed noise: more seeds there (the "
            "claim holds at every size both measured, where the curves start level too)"
        )
    return Verdict(claim, outcome, float(gaps.min()), interval, basis, reasons, missing=missing)


def order_quantiles(confidence: float, dof: int | None, sizes: int) -> tuple[float, float]:
    """The quantiles of the smallest difference's lower and upper ends over `sizes` sizes: the
    claim's level for the lower, Bonferroni's share of it for the upper (see the module)."""
    return quantile(confidence, dof), quantile(1 - (1 - confidence) / sizes, dof)


def _dof(pairs: list[tuple[Measured, Measured]]) -> int | None:
    """The fewer seed-scatter dof of the two sides; None (a normal quantile) where both SEs were given."""
    known = [p.dof for pair in pairs for p in pair if p.dof is not None]
    return min(known) if known else None


def _second_seeds(pair: tuple[Measured, Measured]) -> str:
    return " and ".join(p.second_seed for p in pair if p.se is None)
