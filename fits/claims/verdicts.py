"""The judge stage: each claim judged on the curve stage's `CurveSet`, supported when the whole
95% interval of what it states lies inside the claimed region, contradicted when the whole
interval lies outside it, and inconclusive otherwise, with the reasons, the caveats that apply
and, when inconclusive, what is missing. Each kind's judge is its catalog entry's
(`fits.claims.kinds`). Pure: claims and curves in, frozen `Verdict`s out."""

from dataclasses import replace

from fits.claims.claim import Claim, ClaimSet, Outcome, Verdict
from fits.claims.common import no_estimate
from fits.claims.kinds import CATALOG
from fits.curve.curveset import CurveSet
from fits.curve.gaps import REACH
from fits.curve.level import LEVEL
from foundation.sizes import format_size

__all__ = ["judge", "judge_all", "not_measured"]

TESTBED = "testbed: the embedded synthetic world, not evidence about real data"


def judge(claim: Claim, curves: CurveSet, testbed: bool = False, confidence: float = LEVEL) -> Verdict:
    """The claim's verdict on these curves (`testbed`: the sweep trained on the embedded world),
    its interval at `confidence` (the report's 95%; another for calibration, as bench/next.py's 90%)."""
    verdict = _out_of_reach(claim, curves) or CATALOG[claim.kind].judge(claim, curves, confidence)
    missing = verdict.missing
    if verdict.verdict is Outcome.INCONCLUSIVE and not missing:
        narrower = f"an interval narrower than the claimed region {claim.region}"
        missing = (f"{narrower}: more seeds, or sizes nearer the level",)
    caveats = (*verdict.caveats, *claim.caveats, *((TESTBED,) if testbed else ()))
    return replace(verdict, missing=missing, caveats=caveats)


def judge_all(claims: ClaimSet, curves: CurveSet, testbed: bool = False) -> tuple[Verdict, ...]:
    """Every claim's verdict, in the claims' order. Claims that state the same thing (all but
    their id, words and source) are judged once: a file of 10^4 claims costs its distinct ones."""
    judged: dict[Claim, Verdict] = {}
    verdicts = []
    for claim in claims:
        stated = replace(claim, id="", says="", source="")
        if stated not in judged:
            judged[stated] = judge(claim, curves, testbed)
        verdicts.append(replace(judged[stated], claim=claim))
    return tuple(verdicts)


def not_measured(claim: Claim, what: str) -> Verdict:
    """Inconclusive: the sweep did not measure what the claim is stated in (`what`: e.g.
    "metric cka (measured: mutual_knn@10)")."""
    return no_estimate(
        claim, [f"not measured: {what}"], [f"runs that measure {what.split(' (')[0]}"], claim.caveats
    )


def _out_of_reach(claim: Claim, curves: CurveSet) -> Verdict | None:
    """Inconclusive where the claim's size is more than REACH times past every size measured."""
    sizes = [c.seen.samples for c in (*curves.curves, *curves.unfitted)]
    if claim.at is None or not sizes:
        return None
    low, high = min(s[0] for s in sizes), max(s[-1] for s in sizes)
    if low / REACH <= claim.at <= high * REACH:
        return None
    why = (
        f"at {format_size(claim.at)} is more than {REACH:g}x past every size measured "
        f"({format_size(low)}..{format_size(high)}): no law reaches so far"
    )
    return no_estimate(claim, [why], [f"runs within {REACH:g}x of {format_size(claim.at)}"])
