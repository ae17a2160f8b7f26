"""What every kind's judge shares: the claim's curve, the words of a verdict with no estimate,
the precision a size is written to."""

from fits.claims.claim import Claim, Outcome, Verdict
from fits.curve.curveset import CurveFit, CurveSet

__all__ = ["NO_ESTIMATE", "SIZE_PRECISION", "claim_curve", "missing_curve", "no_estimate"]

NO_ESTIMATE = "no estimate"  # the basis of a verdict with no value and no interval
SIZE_PRECISION = 0.005  # `at: 24.6K` names the checkpoint at 24,576 samples: sizes are written to 3 digits


def claim_curve(curves: CurveSet, claim: Claim, objective: str) -> CurveFit | None:
    """The claim's curve of `objective`: its model, reference and eval set, each where given."""
    return curves.find(objective, claim.model, claim.reference, claim.eval_set)


def no_estimate(claim: Claim, why: list[str], missing: list[str], caveats: tuple[str, ...] = ()) -> Verdict:
    """An inconclusive verdict with no value and no interval, saying why and what would settle it."""
    return Verdict(claim, Outcome.INCONCLUSIVE, None, None, NO_ESTIMATE, why, caveats, missing)


def missing_curve(claim: Claim, objective: str, curves: CurveSet) -> Verdict:
    skipped = [line for line in curves.skipped if line.startswith(f"{objective}/")]
    why = f"no law was fitted for {objective}" + (f" ({skipped[0]})" if skipped else "")
    return no_estimate(claim, [why], [f"a fitted curve of {objective}"])
