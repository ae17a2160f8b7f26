"""`report.html`: one self-contained page (inline SVG, inline CSS, no script, no network) with the
claims first (each claim's verdict, then the gaps), the plots, then the tables `report.md` has, the
provenance and a glossary."""

from html import escape
from pathlib import Path

from fits.claims.claim import Outcome
from fits.curve.level import LEVEL
from fits.report.claims import next_table, verdicts_table
from fits.report.glossary import FLAGS, LAWS, in_words
from fits.report.markdown import calibration_line
from fits.report.tables import Table, gaps_table, lmfit_reports, tables
from fits.report.text import cell
from fits.run.results import FitRun

__all__ = ["write_html"]

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 12px; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
.caveat { background: #fff4d6; border: 1px solid #e0c060; padding: 0.6em 1em; }
.none { color: #b00; font-weight: 600; }
figure { margin: 1em 0 2em; } figure svg { max-width: 100%; height: auto; }
dt { font-weight: 600; } dd { margin: 0 0 0.4em 1.5em; }
td.supported { background: #e3f3e6; font-weight: 600; }
td.contradicted { background: #fbe3e1; font-weight: 600; }
td.inconclusive { background: #f1f1f1; }
"""

TESTBED = (
    "These curves come from the embedded synthetic world (eval set {sets}): a testbed that "
    "exercises the whole path on a laptop. Its numbers say nothing about real encoders, DINOv2 "
    "or the preprint's claims."
)


def _table(table: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in table.headers)
    body = "".join(
        "<tr>" + "".join(f"<td{_verdict_class(v)}>{escape(cell(v))}</td>" for v in row) + "</tr>"
        for row in table.rows
    )
    return f'<table id="{table.id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _verdict_class(value: object) -> str:
    """A verdict's cell is shaded by its verdict, to be read at a glance."""
    word = value.lower() if isinstance(value, str) else None
    return f' class="{word}"' if word in tuple(Outcome) else ""


def _claims(run: FitRun) -> str:
    """The claims' verdicts, the runs that would settle the open ones, then the gaps asked for on
    the command line."""
    verdicts, runs = verdicts_table(run), next_table(run)
    if verdicts.rows:
        head = _table(verdicts) + (f"<h3>{escape(runs.title)}</h3>{_table(runs)}" if runs.rows else "")
    else:
        head = (
            "<p>No claims stated: name a claims file in the sweep file (<code>claims:</code>), "
            "or run <code>orch check CLAIMS.yaml</code>.</p>"
        )
    gaps = gaps_table(run)
    if not gaps.rows:
        return head + "<p>No gap was asked for (<code>orch fit --gap A:B</code>).</p>"
    flags = len(gaps.headers) - 1  # flags in words
    rows = [[*row[:flags], "; ".join(in_words(f) for f in row[flags].split())] for row in gaps.rows]
    return head + f"<h3>{escape(gaps.title)}</h3>" + _table(Table(gaps.id, gaps.title, gaps.headers, rows))


def _svg(path: Path) -> str:
    """The SVG's own element, without the XML prologue, to sit inline in the page."""
    text = path.read_text()
    return text[text.index("<svg") :]


def _provenance(run: FitRun) -> str:
    items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in run.provenance.items())
    return f"<dl>{items}</dl>"


def _glossary() -> str:
    laws = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in LAWS.items())
    flags = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in FLAGS.items())
    return f"<h3>Laws</h3><dl>{laws}</dl><h3>Flags</h3><dl>{flags}</dl>"


def write_html(run: FitRun, out: Path, plots: list[Path]) -> Path:
    """report.html under `out`: claims, inline plots, tables, provenance, glossary."""
    eval_sets = sorted({c.key.eval_set for c in run.curves})
    worlds = [s for s in eval_sets if s.startswith("world")]
    parts = [
        f"<h1>Scaling fits: {escape(run.sweep)}</h1>",
        f'<p class="caveat">{escape(TESTBED.format(sets=", ".join(worlds)))}</p>' if worlds else "",
        f"<p>Metric <code>{escape(run.options.metric)}</code>; points: {escape(run.options.design)}. "
        f"Bands are {LEVEL:.0%}, read off the Akaike-weighted mixture of laws; the PI is for a "
        "new 3-seed mean. A gap's ratio is shown only where the data identify it.</p>",
        f'<section id="claims"><h2>Claims</h2>{_claims(run)}</section>',
    ]
    parts.append("<h2>Plots</h2>")
    for path in (p for p in plots if p.suffix == ".svg"):
        parts.append(f"<figure>{_svg(path)}<figcaption>{escape(path.stem)}</figcaption></figure>")
    for table in tables(run):
        if table.rows and table.id not in ("gaps", "verdicts", "next", "summary"):  # claims opened the page
            parts += [f"<h2>{escape(table.title)}</h2>", _table(table)]
    if line := calibration_line(run):
        parts.append(f"<p>{escape(line)}</p>")
    if run.skipped:
        items = "".join(f"<li>{escape(line)}</li>" for line in run.skipped)
        parts += ["<h2>Skipped</h2>", f"<ul>{items}</ul>"]
    parts.append("<h2>lmfit: the heaviest law of each curve</h2>")
    parts += [
        f"<details><summary>{escape(name)}</summary><pre>{escape(report)}</pre></details>"
        for name, report in lmfit_reports(run)
    ]
    parts += ["<h2>Provenance</h2>", _provenance(run), "<h2>Glossary</h2>", _glossary()]
    page = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>orch fit: {escape(run.sweep)}</title><style>{STYLE}</style></head>"
        f"<body>{''.join(parts)}</body></html>\n"
    )
    path = out / "report.html"
    path.write_text(page)
    return path
