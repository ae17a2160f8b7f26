"""A forecast claim judged: the share of held-out cells within their forecasts' seed noise, with
its Clopper-Pearson interval; no held-out cell: inconclusive."""

from scipy import stats

from fits.claims.claim import Claim, Verdict
from fits.claims.common import no_estimate
from fits.curve.curveset import CurveSet
from fits.curve.level import percent

__all__ = ["judge_forecast"]


def judge_forecast(claim: Claim, curves: CurveSet, confidence: float) -> Verdict:
    wanted = {"objective": claim.objective, "model": claim.model, "reference": claim.reference}
    cells = [
        cell
        for curve in curves
        if curve.key.matches(**wanted, eval_set=claim.eval_set)
        for cell in curve.held_out
    ]
    if not cells:
        why = "the fit held out no measured cell"
        missing = ["held-out runs: holdout.samples_above in the sweep file, or --holdout"]
        return no_estimate(claim, [why], missing)
    hits = sum(cell.within_seed_noise for cell in cells)
    interval = _clopper_pearson(hits, len(cells), confidence)
    basis = (
        f"{hits} of {len(cells)} held-out cells within their forecasts' seed noise "
        f"(Clopper-Pearson {percent(confidence)})"
    )
    return Verdict(claim, claim.region.decide(interval), hits / len(cells), interval, basis)


def _clopper_pearson(hits: int, count: int, level: float) -> tuple[float, float]:
    tail = (1 - level) / 2
    low = float(stats.beta.ppf(tail, hits, count - hits + 1)) if hits else 0.0
    high = float(stats.beta.ppf(1 - tail, hits + 1, count - hits)) if hits < count else 1.0
    return low, high
