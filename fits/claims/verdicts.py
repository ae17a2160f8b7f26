"""The judge stage: each claim judged on the curve stage's `CurveSet`, supported when the whole
95% interval of what it states lies inside the claimed region, contradicted when the whole
interval lies outside it, and inconclusive otherwise, with the reasons, the caveats that apply
and, when inconclusive, what is missing. Each kind's judge is its catalog entry's
(`fits.claims.kinds`). Pure: claims and curves in, frozen `Verdict`s out."""

from dataclasses import replace

from fits.claims.claim import Claim, ClaimSet, Outcome, Verdict
from fits.claims.kinds import CATALOG
from fits.curve.curveset import CurveSet
from fits.curve.fit import FitError
from fits.curve.gaps import REACH
from fits.curve.level import LEVEL
from foundation.errors import did_you_mean
from foundation.sizes import format_size

__all__ = ["check_claims", "judge", "judge_all"]

TESTBED = "testbed: the embedded synthetic world, not evidence about real data"


def check_claims(claims: ClaimSet, sweep: str, objectives: list[str], sizes: tuple[float, float]) -> None:
    """Every claim names objectives the sweep ran and sizes a law may reach (`sizes`: the
    smallest and largest measured), or a FitError line that names the claims file, the claim
    and the fix."""
    low, high = sizes
    for claim in claims:
        where = f"{claims.source}: claim {claim.id!r}"
        for name in claim.objectives:
            if name not in objectives:
                hint = did_you_mean(name, objectives)
                raise FitError(
                    f"{where}: {name!r} is not an objective of {sweep}{hint} ({', '.join(objectives)})"
                )
        if claim.at is not None and not low / REACH <= claim.at <= high * REACH:
            raise FitError(
                f"{where}: at {format_size(claim.at)} is more than {REACH:g}x past every size {sweep} "
                f"measured ({format_size(low)}..{format_size(high)}); no law reaches so far: give a size "
                "within that reach, or at_alignment"
            )


def judge(claim: Claim, curves: CurveSet, testbed: bool = False, confidence: float = LEVEL) -> Verdict:
    """The claim's verdict on these curves (`testbed`: the sweep trained on the embedded world),
    its interval at `confidence` (the report's 95%; another for calibration, as bench/next.py's 90%)."""
    verdict = CATALOG[claim.kind].judge(claim, curves, confidence)
    missing = verdict.missing
    if verdict.verdict is Outcome.INCONCLUSIVE and not missing:
        narrower = f"an interval narrower than the claimed region {claim.region}"
        missing = (f"{narrower}: more seeds, or sizes nearer the level",)
    caveats = (*verdict.caveats, TESTBED) if testbed else verdict.caveats
    return replace(verdict, missing=missing, caveats=caveats)


def judge_all(claims: ClaimSet, curves: CurveSet, testbed: bool = False) -> tuple[Verdict, ...]:
    """Every claim's verdict, in the claims' order."""
    return tuple(judge(claim, curves, testbed) for claim in claims)
