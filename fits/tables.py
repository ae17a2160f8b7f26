"""The fit report's tables as (title, headers, rows), and `report.md` with the plots embedded.
The CLI renders the same sections as text."""

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fits.report import FitReport

__all__ = ["calibration_line", "sections", "write_markdown"]


def _samples(samples: float) -> str:
    return f"{round(samples):,}"


def _curve_name(key: dict) -> str:
    return f"{key['objective']} {key['model']} vs {key['reference']}"


def _interval(pair) -> str:
    return f"[{pair[0]:.4f}, {pair[1]:.4f}]"


def sections(report: "FitReport") -> list[tuple[str, list[str], list[list]]]:
    """(title, headers, rows) for every table of the report."""
    fits = [
        [
            _curve_name(c.key),
            c.fit.law,
            " ".join(f"{k}={v:.4g}±{c.fit.errors[k]:.2g}" for k, v in c.fit.values.items()),
            c.random_init,
            c.fit.lof_p,
            " ".join(c.fit.flags) or "-",
        ]
        for c in report.curves
    ]
    forecasts = [
        [
            _curve_name(c.key),
            _samples(f.samples),
            f.prediction,
            _interval(f.ci),
            _interval(f.pi),
            f"{f.extrapolation:.3g}x",
            " ".join(f.flags) or "-",
        ]
        for c in report.curves
        for f in c.forecasts
    ]
    held = [
        [
            _curve_name(c.key),
            _samples(h["samples"]),
            h["observed"],
            h["prediction"],
            f"{h['z']:+.2f}",
            "yes" if h["within_seed_noise"] else "NO",
        ]
        for c in report.curves
        for h in c.held_out
    ]
    gaps = [
        [
            f"{g['faster']}:{g['slower']}",
            f"{g['model']} vs {g['reference']}",
            g["target"],
            _samples(g["samples_a"]) if g["samples_a"] else "-",
            _samples(g["samples_b"]),
            _ratio(g),
            f"{g['flops_ratio']:.3g}x" if g["flops_ratio"] else "-",
            " ".join(g["flags"]),
        ]
        for g in report.gaps
    ]
    earlier = [
        [
            _curve_name(e),
            _samples(e["samples"]),
            e["prediction"],
            _interval(e["pi"]),
            e["observed"],
            e["verdict"],
        ]
        for e in report.earlier
    ]
    return [
        (
            f"Fits ({report.options.metric})",
            ["curve", "law", "parameters", "random_init", "lof_p", "flags"],
            fits,
        ),
        ("Forecasts", ["curve", "S", "prediction", "95% CI", "95% PI", "extrapolation", "flags"], forecasts),
        ("Held-out cells", ["curve", "S", "observed", "predicted", "z", "within noise"], held),
        ("Sample gaps", ["A:B", "curve", "a*", "N_A*", "S_B", "R (samples)", "R (FLOPs)", "flags"], gaps),
        ("Earlier forecasts", ["curve", "S", "forecast", "95% PI", "observed", "verdict"], earlier),
    ]


def _ratio(gap: dict) -> str:
    if gap["ratio"] is None:
        return "-"
    if gap["interval"] is None:
        return f"{gap['ratio']:.3g}x [no interval]"
    low, high = gap["interval"]
    return f"{gap['ratio']:.3g}x [{low:.3g}, {high:.3g}]"


def calibration_line(report: "FitReport") -> str | None:
    calibration = report.calibration()
    if not calibration["held_out_cells"]:
        return None
    return (
        f"Calibration: {calibration['within_seed_noise']} of {calibration['held_out_cells']} held-out "
        "cells within seed noise (|z| <= 1.96)"
    )


def _markdown_table(headers: list[str], rows: list[list]) -> str:
    cell = lambda v: "-" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_markdown(report: "FitReport", out: Path, plots: list[Path]) -> Path:
    lines = [
        f"# Scaling fits: {report.sweep}",
        "",
        f"Store: `{report.store}`. Metric: `{report.options.metric}`. Points: each trial's "
        f"{'final checkpoint' if report.options.points == 'final' else 'checkpoints'}; bands are 95%, "
        "the PI is for a 3-seed mean. Flags say where a number should not be trusted.",
        "",
    ]
    for title, headers, rows in sections(report):
        if rows:
            lines += [f"## {title}", "", _markdown_table(headers, rows), ""]
    if line := calibration_line(report):
        lines += [line, ""]
    lines += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots if p.suffix == ".png"]
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path
