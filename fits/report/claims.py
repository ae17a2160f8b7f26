"""The report's claim tables: each claim's verdict, and the runs that would settle the open ones."""

import math

from fits.claims.claim import Claim, Kind, Outcome, Per, Verdict
from fits.claims.kinds import CATALOG
from fits.curve.level import LEVEL, percent
from fits.next.plan import PLANNED_IN_REPORT
from fits.report.text import Table, samples_cell
from fits.run.results import FitRun

__all__ = ["INTERVAL", "claims_table", "next_table", "verdict_interval", "verdicts_table", "width_text"]

INTERVAL = f"{percent(LEVEL)} interval"  # the verdicts table's column of intervals


def _amount(kind: Kind, value: float | None) -> str:
    """A claim's measured value as its kind reads: a ratio, a share, or a level."""
    return CATALOG[kind].show(value)


def _region(claim: Claim) -> str:
    low, high = (
        _amount(claim.kind, v) if math.isfinite(v) else None for v in (claim.region.low, claim.region.high)
    )
    unit = " FLOPs" if claim.per is Per.FLOPS else ""
    if low is None:
        return f"<= {high}{unit}"
    return f">= {low}{unit}" if high is None else f"[{low}, {high}]{unit}"


def verdict_interval(verdict: Verdict) -> str:
    """'[low, high]' in the claim kind's units; '-' where there is no interval (no estimate)."""
    if verdict.interval is None or not any(math.isfinite(end) for end in verdict.interval):
        return "-"
    low, high = (_amount(verdict.claim.kind, v) for v in verdict.interval)
    return f"[{low}, {high}]"


def _axes(verdict: Verdict) -> list[str]:
    """A gap claim's ratio on both axes, samples and FLOPs, where each is known."""
    lines = []
    for axis, found in verdict.axes.items():
        if found.get("value") is not None and found.get("interval") is not None:
            low, high = found["interval"]
            lines.append(f"in {axis}: {found['value']:.3g}x [{low:.3g}, {high:.3g}]")
        elif found.get("bound"):
            lines.append(f"in {axis}: {found['bound']}")
    return lines


def verdicts_table(run: FitRun) -> Table:
    """Each claim: what was measured, its 95% interval, the verdict and why; "was" is the verdict
    the last stored fit gave it."""
    return claims_table(run.verdicts, f"Claims ({run.options.metric})", run.earlier_verdicts)


def claims_table(verdicts, title: str, earlier: dict[str, tuple[str, str]], level: float = LEVEL) -> Table:
    """The verdicts table of any verdicts, under `title` (`earlier`: claim id -> the last stored
    verdict and its fit; `level`: the intervals' confidence, `orch sweep --until-decided`'s looks
    judge at another)."""
    rows = []
    for v in verdicts:
        why = [v.basis, *v.reasons, *_axes(v), *(f"missing: {m}" for m in v.missing)]
        why += [f"flag: {f}" for f in v.flags]
        before = earlier.get(v.claim.id)
        rows.append(
            [
                v.claim.id,
                f"{v.claim.says} ({v.claim.source})",
                _region(v.claim),
                _amount(v.claim.kind, v.value),
                verdict_interval(v),
                v.verdict.upper() if v.verdict is not Outcome.INCONCLUSIVE else str(v.verdict),
                "; ".join(why),
                "; ".join(v.caveats) or "-",
                _was(v.verdict, before),
            ]
        )
    headers = [
        "id",
        "claim",
        "claimed",
        "measured",
        f"{percent(level)} interval",
        "verdict",
        "why",
        "caveats",
        "was",
    ]
    return Table("verdicts", title, headers, rows)


def next_table(run: FitRun) -> Table:
    """For each inconclusive claim, the runs that narrow its interval most per FLOP alone
    (`orch next` ranks them all and picks within a budget). A run whose FLOPs the store does not
    record shows none (its ranking is per sample): `orch next --template` prices it."""
    kinds = {v.claim.id: v.claim.kind for v in run.verdicts}
    known = run.curves.flops_per_sample
    rows = [
        [
            r.claim,
            f"{r.objective} / {r.model}",
            samples_cell(r.samples),
            r.seeds,
            f"{r.flops:.3g}" if (r.objective, r.model) in known else "- (orch next --template)",
            f"{width_text(kinds[r.claim], r.width_now)} -> {width_text(kinds[r.claim], r.width_after)}",
            f"{r.decided:.0%}",
        ]
        for r in run.next_runs
    ]
    headers = [
        "claim",
        "run",
        "data size",
        "seeds",
        "FLOPs",
        f"{LEVEL:.0%} width now -> after",
        "decided after",
    ]
    title = (
        f"Runs that would settle the open claims (the first {PLANNED_IN_REPORT}; orch next ranks them all)"
    )
    return Table("next", title, headers, rows)


def width_text(kind: Kind, width: float) -> str:
    """An interval's width as its kind reads: a ratio's as a factor high / low, else a difference."""
    return CATALOG[kind].width(width)


def _was(verdict: str, before: tuple[str, str] | None) -> str:
    if before is None:
        return "-"  # no stored fit judged this claim
    return "unchanged" if before[0] == verdict else f"{before[0]} ({before[1]})"
