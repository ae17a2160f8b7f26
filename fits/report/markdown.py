"""The fit report's tables as (title, headers, rows), and `report.md` with the plots embedded.
The CLI renders the same sections as text, with the same cell formatter."""

from pathlib import Path

from fits.ensemble import UNBOUNDED_REACH
from fits.level import LEVEL
from fits.results import FitRun, GapEstimate
from orchestrator.render import cell

__all__ = ["calibration_line", "gap_ratio", "published_section", "sections", "write_markdown"]


def _samples(samples: float) -> str:
    return f"{round(samples):,}"


def _interval(pair) -> str:
    return f"[{pair[0]:.4f}, {pair[1]:.4f}]"


def sections(run: FitRun) -> list[tuple[str, list[str], list[list]]]:
    """(title, headers, rows) for every table of the run."""
    fits = [
        [
            c.name,
            f"{name} ({c.ensemble.weights.get(name, 0):.0%})",
            " ".join(f"{k}={v:.4g}±{fit.errors[k]:.2g}" for k, v in fit.values.items()),
            fit.aicc,
            fit.lof_p,
            " ".join(fit.flags) or "-",
        ]
        for c in run.curves
        for name, fit in sorted(c.fits.items(), key=lambda item: -c.ensemble.weights.get(item[0], 0))
    ]
    forecasts = [
        [
            c.name,
            _samples(f.samples),
            "withheld" if f.withheld else f.prediction,
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
            _samples(g.samples_b) if g.samples_b else "-",
            gap_ratio(g),
            f"{g.flops_ratio:.3g}x" if g.flops_ratio and g.identifiable else "-",
            "; ".join(g.reasons) or "-",
            " ".join(g.flags),
        ]
        for g in run.gaps
    ]
    backtests = [
        [
            f"{row['ratio']}x",
            row["curves"],
            row["median_abs_error"],
            row["median_rel_error"],
            row["rms_z"],
            f"{row['coverage']:.0%}",
        ]
        for row in run.backtest()
    ]
    joint = [
        [
            f"{key['objective']} vs {key['reference']}",
            " ".join(f"{k}={v:.4g}±{fit.errors[k]:.2g}" for k, v in fit.values.items()),
            f"{fit.held_out_size:.3g}",
            f"{sum(c.covered for c in fit.cells)} of {len(fit.cells)}",
        ]
        for key, fit in run.joint
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
            ["curve", "law (weight)", "parameters", "AICc", "lof_p", "flags"],
            fits,
        ),
        (
            "Forecasts",
            ["curve", "S", "prediction", f"{LEVEL:.0%} CI", f"{LEVEL:.0%} PI", "extrapolation", "flags"],
            forecasts,
        ),
        ("Held-out cells", ["curve", "S", "observed", "predicted", "z", "within noise"], held),
        (
            "Sample gaps",
            [
                "A:B",
                "curve",
                "a*",
                "N_A*",
                "N_B*",
                "R (samples)",
                "R (FLOPs)",
                "not identifiable because",
                "flags",
            ],
            gaps,
        ),
        (
            "Backtests: fit on S <= S_max / k, forecast S_max",
            ["k", "curves", "median |error|", "median rel. error", "rms z", f"{LEVEL:.0%} PI coverage"],
            backtests,
        ),
        (
            "Joint law a(N, S): fitted on the smaller models, forecasting the largest",
            ["curves", "parameters", "held-out N", "inside the PI"],
            joint,
        ),
        ("Earlier forecasts", ["curve", "S", "forecast", f"{LEVEL:.0%} PI", "observed", "verdict"], earlier),
    ]


def gap_ratio(gap: GapEstimate) -> str:
    """The headline only where the data identify it; else the bound, or 'not identifiable'."""
    if gap.identifiable:
        return f"{gap.ratio:.3g}x [{gap.ci[0]:.3g}, {gap.ci[1]:.3g}]"
    if gap.bound:
        return f"not identifiable; R {gap.bound['side']} {gap.bound['ratio']:.3g}x"
    return "not identifiable"


def published_section(run: FitRun) -> tuple[str, list[str], list[list]] | None:
    """Naive gaps between published single checkpoints measured like these curves (same
    reference and eval set): their own table, never mixed with the measured gaps."""
    if not run.published:
        return None
    rows = [
        [
            f"{g.faster}:{g.slower}",
            g.model,
            f"{g.reference} ({g.eval_set})",
            g.target,
            gap_ratio(g),
            " ".join(g.flags),
        ]
        for g in run.published
    ]
    return (
        "Published checkpoints (not measured here)",
        ["A:B", "models", "reference", "a*", "R", "flags"],
        rows,
    )


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
        "the PI is for a 3-seed mean. Every forecast averages the laws by their Akaike weights "
        "(the fits table gives each weight); laws without a ceiling forecast at most "
        f"{UNBOUNDED_REACH:g}x past their data. Flags say where a number should not be trusted.",
        "",
    ]
    for title, headers, rows in sections(run):
        if rows:
            lines += [f"## {title}", "", _markdown_table(headers, rows), ""]
    if line := calibration_line(run):
        lines += [line, ""]
    if published := published_section(run):
        title, headers, rows = published
        lines += [f"## {title}", "", _markdown_table(headers, rows), ""]
    lines += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots if p.suffix == ".png"]
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path
