"""`report.md`: the claims' verdicts and the gaps, the plots, then the rest of the fit report's
tables (`tables`), and the calibration line the text, markdown and HTML reports share."""

import re
from html import escape
from pathlib import Path

from fits.curve.ensemble import UNBOUNDED_REACH
from fits.curve.level import LEVEL
from fits.report.tables import lmfit_reports, tables
from fits.report.text import cell
from fits.run.results import FitRun

__all__ = ["calibration_line", "write_markdown"]

MARKUP = re.compile(r"<(?=[A-Za-z/!?])|&(?=[A-Za-z#])")  # what opens a tag, a comment or an entity


def calibration_line(run: FitRun) -> str | None:
    """The held-out cells (counted in runs) and the weakest backtest, the weaker first: a reader
    who quotes one number quotes the one that flatters least."""
    calibration = run.calibration()
    parts = []
    if calibration["held_out_cells"]:
        parts.append(
            f"held-out cells {calibration['within_seed_noise']} of {calibration['held_out_cells']} within "
            f"seed noise (inside the {LEVEL:.0%} PI), from {calibration['runs']} runs (a run's checkpoints "
            "are not independent)"
        )
    if (row := calibration["weakest_backtest"]) is not None:
        parts.append(
            f"backtests at {row['ratio']}x past their data {row['coverage']:.0%} of {row['curves']} "
            f"curves within their {LEVEL:.0%} PI (rms z {row['rms_z']:.2g}; each k in the backtests table)"
        )
    if not parts:
        return None
    if calibration["weaker"] == "backtest":
        parts.reverse()
    return "Calibration, the weaker first: " + "; ".join(parts)


def _inline(text: str) -> str:
    """Text from the store or a claims file as Markdown shows it, never as markup: a '<' that
    could open a tag and a '&' that could open an entity are escaped (a '<=' reads as written),
    a cell's '|' and line breaks stay inside the cell."""
    text = MARKUP.sub(lambda found: escape(found.group(0)), text)
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _markdown_table(headers: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(_inline(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_inline(cell(v)) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_markdown(run: FitRun, out: Path, plots: list[Path]) -> Path:
    lines = [
        f"# Scaling fits: {_inline(run.sweep)}",
        "",
        f"Store: `{run.store}`. Metric: `{run.options.metric}`. Points: {run.options.design}; "
        f"bands are {LEVEL:.0%}, "
        "the PI is for a 3-seed mean. Every forecast averages the laws by their Akaike weights "
        "(the fits table gives each weight); a law without a ceiling is read on a clock that slows "
        f"past its data and stops at {UNBOUNDED_REACH:g}x it. Flags say where a number should not be "
        "trusted.",
        "",
    ]
    found = {table.id: table for table in tables(run) if table.rows}
    found.pop("summary", None)  # the CLI's short view of the fits table below
    first = [found.pop(name) for name in ("verdicts", "next", "gaps") if name in found]  # claims open it
    for table in first:
        lines += [f"## {_inline(table.title)}", "", _markdown_table(table.headers, table.rows), ""]
    lines += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots if p.suffix == ".png"] + [""]
    for table in found.values():
        lines += [f"## {_inline(table.title)}", "", _markdown_table(table.headers, table.rows), ""]
    if line := calibration_line(run):
        lines += [line, ""]
    lines += ["", "## lmfit: the heaviest law of each curve", ""]
    for name, report in lmfit_reports(run):
        lines += [f"### {_inline(name)}", "", "~~~~text", report, "~~~~", ""]
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path
