"""A fit run as text, for `orch fit` and `orch check` and the closed loop: the claims' verdicts
first, as a narrow table with each claim's words, why and caveats beneath, then the tables asked
for."""

from typing import Any

from fits.report.text import render_table

__all__ = ["fit_text", "verdicts_text"]


def verdicts_text(table: Any) -> str:
    """The verdicts as a narrow table (id, claimed, measured, interval, verdict, was), then each
    claim's words, why and caveats on lines of their own."""
    interval = next(h for h in table.headers if h.endswith(" interval"))  # at the verdicts' level
    brief = render_table(*table.select(["id", "claimed", "measured", interval, "verdict", "was"]))
    notes = [
        f"{r['id']}: {r['claim']}\n  why: {r['why']}\n  caveats: {r['caveats']}" for r in table.records()
    ]
    return "\n".join([table.title, brief, "", *notes])


def fit_text(run: Any, detail: bool, brief: tuple[str, ...] | None = None) -> str:
    """The run as text: the claims' verdicts first, then each curve's heaviest law, forecasts and
    gaps (`brief`: the tables to print, default `orch fit`'s summary); `detail` adds every law
    and every other table."""
    from fits.report.markdown import calibration_line
    from fits.report.tables import SUMMARY, tables

    brief = SUMMARY if brief is None else brief
    shown = [t for t in tables(run) if t.rows and (t.id in brief if not detail else t.id != "summary")]
    parts = [
        verdicts_text(t) if t.id == "verdicts" else f"{t.title}\n{render_table(t.headers, t.rows)}"
        for t in shown
    ]
    if detail or "forecasts" in brief:
        parts += [line] if (line := calibration_line(run)) else []
    parts += [f"skipped {line}" for line in run.skipped]
    return "\n\n".join(parts)
