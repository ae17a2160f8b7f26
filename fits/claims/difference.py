"""A difference claim judged: `above` minus `below` at the one size `at` both measured (e.g. a 33M
JEPA at 0.108 and a 33M NTP at 0.071 after 21.6M samples, `at_least: 0.02`), with the interval of
the two measured means' standard errors (the seed scatter, or imported rows' SEs). An order claim
with an `at` is one with its region at least 0."""

import numpy as np

from fits.claims.claim import Claim, Verdict
from fits.claims.common import measured_at, measured_curve, missing_curve, no_estimate
from fits.curve.curveset import CurveSet
from fits.curve.level import quantile
from foundation.sizes import format_size

__all__ = ["judge_difference"]


def judge_difference(claim: Claim, curves: CurveSet, confidence: float) -> Verdict:
    high, low = measured_curve(curves, claim, claim.above), measured_curve(curves, claim, claim.below)
    if high is None or low is None:
        return missing_curve(claim, claim.above if high is None else claim.below, curves)
    at = format_size(claim.at)
    a, b = measured_at(high, claim.at), measured_at(low, claim.at)
    if a is None or b is None:
        name = claim.above if a is None else claim.below
        return no_estimate(claim, [f"not measured: {name} at {at}"], [f"a run of {name} at {at}"])
    value = a.mean - b.mean
    reasons = [f"{claim.above} {a.mean:.4g} and {claim.below} {b.mean:.4g} at {at}"]
    unknown = [p for p in (a, b) if p.se is None]
    if unknown:
        why = " and ".join(f"{p.name} is one seed and no SE" for p in unknown)
        return no_estimate(
            claim, [*reasons, f"{why}: its noise is unknown"], [p.second_seed for p in unknown]
        )
    known = [p.dof for p in (a, b) if p.dof is not None]
    half = quantile(confidence, min(known) if known else None) * float(np.hypot(a.se, b.se))
    interval = (value - half, value + half)
    basis = f"the difference of the measured means at {at}, {claim.above} minus {claim.below}"
    basis += f" ({a.source}; {b.source})"
    return Verdict(claim, claim.region.decide(interval), value, interval, basis, reasons)
