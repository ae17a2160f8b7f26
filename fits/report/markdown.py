"""The fit report's tables as (title, headers, rows), and `report.md` with the plots embedded.
The CLI renders the same sections as text, with the same cell formatter."""

from pathlib import Path

from fits.level import LEVEL
from fits.results import FitRun, GapEstimate
from orchestrator.render import cell

__all__ = ["calibration_line", "sections", "write_markdown"]


def _samples(samples: float) -> str:
    return f"{round(samples):,}"


def _interval(pair) -> str:
    return f"[{pair[0]:.4f}, {pair[1]:.4f}]"


def sections(run: FitRun) -> list[tuple[str, list[str], list[list]]]:
    """(title, headers, rows) for every table of the run."""
    fits = [
        [
            c.name,
            c.fit.law,
            " ".join(f"{k}={v:.4g}±{c.fit.errors[k]:.2g}" for k, v in c.fit.values.items()),
            c.random_init,
            c.fit.lof_p,
            " ".join(c.fit.flags) or "-",
        ]
        for c in run.curves
    ]
    forecasts = [
        [
            c.name,
            _samples(f.samples),
            f.prediction,
            _interval(f.ci),
            _interval(f.pi),
            f"{f.extrapolation:.3g}x",
            " ".join(f.flags) or "-",
        ]
        for c in run.curves
        for f in c.forecasts
    ]
    held = [
        [
            c.name,
            _samples(h.samples),
            h.observed,
            h.prediction,
            f"{h.z:+.2f}",
            "yes" if h.within_seed_noise else "NO",
        ]
        for c in run.curves
        for h in c.held_out
    ]
    gaps = [
        [
            f"{g.faster}:{g.slower}",
            f"{g.model} vs {g.reference}",
            g.target,
            _samples(g.samples_a) if g.samples_a else "-",
            _samples(g.samples_b),
            _ratio(g),
            f"{g.flops_ratio:.3g}x" if g.flops_ratio else "-",
            " ".join(g.flags),
        ]
        for g in run.gaps
    ]
    earlier = [
        [
            e.name,
            _samples(e.samples),
            e.prediction,
            _interval(e.pi),
            e.observed,
            e.verdict,
        ]
        for e in run.earlier
    ]
    return [
        (
            f"Fits ({run.options.metric})",
            ["curve", "law", "parameters", "random_init", "lof_p", "flags"],
            fits,
        ),
        (
            "Forecasts",
            ["curve", "S", "prediction", f"{LEVEL:.0%} CI", f"{LEVEL:.0%} PI", "extrapolation", "flags"],
            forecasts,
        ),
        ("Held-out cells", ["curve", "S", "observed", "predicted", "z", "within noise"], held),
        ("Sample gaps", ["A:B", "curve", "a*", "N_A*", "S_B", "R (samples)", "R (FLOPs)", "flags"], gaps),
        ("Earlier forecasts", ["curve", "S", "forecast", f"{LEVEL:.0%} PI", "observed", "verdict"], earlier),
    ]


def _ratio(gap: GapEstimate) -> str:
    if gap.ratio is None:
        return "-"
    if gap.interval is None:
        return f"{gap.ratio:.3g}x [no interval]"
    low, high = gap.interval
    return f"{gap.ratio:.3g}x [{low:.3g}, {high:.3g}]"


def calibration_line(run: FitRun) -> str | None:
    calibration = run.calibration()
    if not calibration["held_out_cells"]:
        return None
    return (
        f"Calibration: {calibration['within_seed_noise']} of {calibration['held_out_cells']} held-out "
        f"cells within seed noise (inside the {LEVEL:.0%} band)"
    )


def _markdown_table(headers: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_markdown(run: FitRun, out: Path, plots: list[Path]) -> Path:
    lines = [
        f"# Scaling fits: {run.sweep}",
        "",
        f"Store: `{run.store}`. Metric: `{run.options.metric}`. Points: {run.options.design}; "
        f"bands are {LEVEL:.0%}, "
        "the PI is for a 3-seed mean. Flags say where a number should not be trusted.",
        "",
    ]
    for title, headers, rows in sections(run):
        if rows:
            lines += [f"## {title}", "", _markdown_table(headers, rows), ""]
    if line := calibration_line(run):
        lines += [line, ""]
    lines += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots if p.suffix == ".png"]
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path
