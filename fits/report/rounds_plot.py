"""The claims' intervals round by round (`orch sweep --until-decided`): for each claim the loop
looked at, its interval at the grid's look and after each round, against the FLOPs the rounds had
spent, coloured by the verdict it gave, with the claimed region shaded and, from round 1 on, the
width the planner expected drawn as a thin black bar beside the one found."""

import json
import math

import matplotlib.pyplot as plt
from matplotlib import transforms

from fits.claims.claim import Claim
from fits.claims.kinds import CATALOG
from fits.curve.level import percent
from fits.run.results import FitRun

__all__ = ["rounds_figure"]

VERDICT_COLOURS = {"supported": "tab:green", "contradicted": "tab:red", "inconclusive": "tab:gray"}


def _looks(rounds) -> list[tuple[float, dict, dict]]:
    """(FLOPs spent, each claim's look, each claim's expected width) at the grid's look and
    after each finished round."""
    looks, spent = [(0.0, json.loads(rounds[0].before), {})], 0.0
    for row in rounds:
        spent += row.flops
        if row.after is not None:
            looks.append((spent, json.loads(row.after), json.loads(row.expected)))
    return looks


def _draw_claim(axes: plt.Axes, claim: Claim, looks: list[tuple[float, dict, dict]]) -> None:
    """One claim's intervals at each look, the expected widths, and its claimed region in view
    (a look without an interval is marked on the axis)."""
    ratio = CATALOG[claim.kind].ratio
    beside = transforms.offset_copy(axes.transData, axes.figure, x=7, units="points")  # not over the bar
    ends = []
    for spent, found, expected in looks:
        look = found.get(claim.id)
        if look is None or look["low"] is None:
            axes.annotate(
                "no interval", (spent, 0.02), xycoords=("data", "axes fraction"), ha="center", fontsize=7
            )
            continue
        low, high = look["low"], look["high"]
        shown = high if math.isfinite(high) else low * 10 if ratio else low + 1
        axes.plot([spent, spent], [low, shown], color=VERDICT_COLOURS[look["verdict"]], lw=4)
        ends += [low, shown]
        width = expected.get(claim.id)
        if width is not None and math.isfinite(width) and math.isfinite(high):
            centre, half = (math.sqrt(low * high), width / 2) if ratio else ((low + high) / 2, width / 2)
            span = (
                (centre / math.exp(half), centre * math.exp(half))
                if ratio
                else (centre - half, centre + half)
            )
            axes.plot([spent, spent], span, color="k", lw=1, alpha=0.6, marker="_", ms=8, transform=beside)
    region = claim.region
    edges = [e for e in (region.low, region.high) if math.isfinite(e)]
    if ends or edges:
        lo, hi = min(ends + edges), max(ends + edges)
        margin = (hi / lo) ** 0.08 if ratio and lo > 0 else (hi - lo) * 0.08 or 0.01
        bottom, top = (lo / margin, hi * margin) if ratio and lo > 0 else (lo - margin, hi + margin)
        axes.set_ylim(bottom, top)
        axes.axhspan(max(region.low, bottom), min(region.high, top), color="tab:green", alpha=0.08, lw=0)
    if ratio:
        axes.set_yscale("log")
    axes.set_title(f"{claim.id}: claimed {region}", fontsize=8)


def rounds_figure(run: FitRun) -> plt.Figure | None:
    """One panel per claim the loop judged; None where the sweep ran no round."""
    if not run.rounds:
        return None
    looks = _looks(run.rounds)
    claims = {v.claim.id: v.claim for v in run.verdicts}
    ids = [claim_id for claim_id in looks[0][1] if claim_id in claims]
    if not ids:
        return None
    figure, panels = plt.subplots(len(ids), 1, figsize=(6.4, 2.1 * len(ids)), sharex=True, squeeze=False)
    for axes, claim_id in zip(panels[:, 0], ids, strict=True):
        _draw_claim(axes, claims[claim_id], looks)
    confidence = run.rounds[-1].confidence
    panels[-1, 0].set_xlabel("FLOPs the rounds spent (0: the grid)")
    figure.suptitle(
        f"claims' {percent(confidence)} intervals, round by round\n(green supported, red contradicted, grey "
        "inconclusive; thin black bars beside: the width the planner expected)",
        fontsize=9,
    )
    figure.tight_layout()
    return figure
