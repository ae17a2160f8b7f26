"""Scaling plots (PNG and SVG) from fitted results; nothing here refits.

- alignment vs samples per model and reference (`scaling_plot`), far forecasts across a broken
  axis, the legend one entry per objective and each mark's style once;
- residuals per curve (colour: objective; marker and line: reference);
- one figure per gap: the two curves and the crossing when the gap is identifiable, its reasons
  as a text panel when it is not, and beside either R against the level (`ratio_plot`);
- the held-out calibration, with its n and the |z| > 5 cells counted at the edges;
- the claims' intervals round by round, where `orch sweep --until-decided` ran rounds (`rounds_plot`).
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from fits.curve.level import LEVEL, Z
from fits.report.ratio_plot import draw_ratio_by_level
from fits.report.rounds_plot import rounds_figure
from fits.report.scaling_plot import colour, scaling_figure
from fits.run.results import FitRun, GapEstimate

__all__ = ["calibration_figure", "figures", "gap_figure", "residual_figure", "scaling_figure", "write_plots"]

MARKERS = ("o", "s", "^", "v", "D", "P")
DPI = 120
Z_EDGE = 5.0  # calibration cells past |z| = 5 are drawn at the edge and counted
plt.rcParams["svg.hashsalt"] = "orch"  # stable ids inside the SVGs


def _save(figure: plt.Figure, out: Path, stem: str) -> list[Path]:
    """The figure as PNG and SVG, cropped to what it draws: the crop is measured once (each
    `bbox_inches="tight"` draws the whole figure again to find it)."""
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    figure.set_dpi(DPI)
    crop = figure.get_tightbbox(figure.canvas.get_renderer()).padded(plt.rcParams["savefig.pad_inches"])
    for path in paths:
        figure.savefig(path, dpi=DPI, bbox_inches=crop)
    plt.close(figure)
    return paths


def residual_figure(run: FitRun) -> plt.Figure:
    figure, axes = plt.subplots(figsize=(7.5, 3))
    references = sorted({c.key.reference for c in run.curves})
    for curve in run.curves:
        index = references.index(curve.key.reference)
        axes.plot(
            curve.points.samples,
            curve.fit.residuals,
            marker=MARKERS[index % len(MARKERS)],
            ls=("-", "--", ":", "-.")[index % 4],
            color=colour(curve.key.objective),
            ms=3,
            alpha=0.8,
            label=f"{curve.key.objective} vs {curve.key.reference} ({curve.fit.law})",
        )
    axes.axhline(0, color="k", lw=0.8)
    for z in (-Z, Z):
        axes.axhline(z, color="k", lw=0.5, ls="--")
    axes.set_xscale("log")
    axes.set_xlabel("samples seen")
    axes.set_ylabel("residual of the heaviest law\n(seed-noise z)", fontsize=8)
    axes.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return figure


def _gap_text(gap: GapEstimate) -> str:
    bound = str(gap.bound) if gap.bound else "no bound either"
    lines = [f"{gap.faster}:{gap.slower}, {gap.model} vs {gap.reference}: not identifiable ({bound})", ""]
    lines += [f"- {reason}" for reason in gap.reasons]
    return "\n".join(lines)


def _gap_curves(run: FitRun, gap: GapEstimate) -> list:
    """The fitted curves the gap compares: its two objectives at its model and reference."""
    return [
        curve
        for curve in run.curves
        if curve.key.objective in (gap.faster, gap.slower)
        and (curve.key.model, curve.key.reference) == (gap.model, gap.reference)
    ]


def _levels_reached(run: FitRun, gap: GapEstimate) -> dict[str, tuple[float, float]]:
    """Each curve's lowest and highest seed mean: the levels it reaches in its data."""
    return {
        c.key.objective: (float(min(c.points.mean)), float(max(c.points.mean))) for c in _gap_curves(run, gap)
    }


def _unidentified_figure(run: FitRun, gap: GapEstimate) -> plt.Figure:
    """The reasons as text, over R against the level where the curves share levels."""
    lines = 2 + len(gap.reasons)
    if not gap.ratio_curve:
        figure = plt.figure(figsize=(7.5, 0.7 + 0.25 * lines))
        figure.text(0.01, 0.95, _gap_text(gap), fontsize=8, va="top", wrap=True)
        return figure
    figure, axes = plt.subplots(figsize=(7.5, 3.5 + 0.25 * lines))
    figure.subplots_adjust(top=3.5 / (3.5 + 0.25 * lines) - 0.08)
    figure.text(0.01, 0.99, _gap_text(gap), fontsize=8, va="top", wrap=True)
    draw_ratio_by_level(axes, gap, _levels_reached(run, gap))
    return figure


def gap_figure(run: FitRun, gap: GapEstimate) -> plt.Figure:
    """The two curves and the crossing, or the reasons as text when not identifiable; R
    against the level beside them wherever both curves cross a level inside their data."""
    if not gap.identifiable:
        return _unidentified_figure(run, gap)
    figure, (axes, by_level) = plt.subplots(1, 2, figsize=(12, 4), width_ratios=(3, 2))
    if gap.ratio_curve:
        draw_ratio_by_level(by_level, gap, _levels_reached(run, gap))
    else:
        by_level.set_axis_off()
    for curve in _gap_curves(run, gap):
        tint = colour(curve.key.objective)
        axes.errorbar(
            curve.points.samples,
            curve.points.mean,
            yerr=curve.points.sigma,
            fmt="o",
            color=tint,
            ms=3,
            label=f"{curve.key.objective}: mean ± se",
        )
        grid = np.array([b.samples for b in curve.band])
        inside = grid <= curve.points.samples[-1]
        axes.plot(grid[inside], np.array([b.prediction for b in curve.band])[inside], color=tint)
    axes.axhline(gap.target, color="k", ls=":", lw=1, label=f"target a* = {gap.target:.3g}")
    low, high = gap.ci
    axes.errorbar(
        [gap.samples_a],
        [gap.target],
        xerr=[[gap.samples_a - gap.samples_b / high], [gap.samples_b / low - gap.samples_a]],
        fmt="s",
        color="k",
        capsize=4,
        label=f"N_A* with its {LEVEL:.0%} interval",
    )
    axes.scatter([gap.samples_b], [gap.target], marker="D", color="k", label="N_B*")
    axes.set_xscale("log")
    ends = [gap.samples_b / high, gap.samples_b / low, *axes.get_xlim()]  # the whiskers in the frame
    axes.set_xlim(min(e for e in ends if e > 0) / 1.3, max(e for e in ends if np.isfinite(e)) * 1.3)
    axes.set_title(
        f"R = {gap.ratio:.3g}x [{low:.3g}, {high:.3g}] ({gap.faster} vs {gap.slower}, {gap.reference})",
        fontsize=9,
    )
    axes.set_xlabel("samples seen")
    axes.set_ylabel(gap.metric)
    axes.legend(fontsize=6, loc="best")
    figure.text(0.01, -0.02, "flags  " + ", ".join(f.split(":")[0] for f in gap.flags), fontsize=6, va="top")
    return figure


def calibration_figure(run: FitRun) -> plt.Figure | None:
    zs = np.array([h.z for c in run.curves for h in c.held_out])
    if zs.size == 0:
        return None
    inside = sum(h.within_seed_noise for c in run.curves for h in c.held_out)
    clipped = int(np.sum(np.abs(zs) > Z_EDGE))
    figure, axes = plt.subplots(figsize=(5, 3))
    axes.hist(np.clip(zs, -Z_EDGE, Z_EDGE), bins=np.linspace(-Z_EDGE, Z_EDGE, 21), color="tab:gray")
    for z in (-Z, Z):
        axes.axvline(z, color="k", ls="--", lw=0.8)
    edge = f"; {clipped} with |z| > {Z_EDGE:g} drawn at the edges" if clipped else ""
    axes.set_title(f"held-out cells: n = {zs.size}, {inside} inside the {LEVEL:.0%} PI{edge}", fontsize=8)
    axes.set_xlabel("z = (observed - forecast) / sd of the forecast")
    axes.set_ylabel("cells")
    return figure


def figures(run: FitRun, baselines: pd.DataFrame) -> list[tuple[str, plt.Figure]]:
    """(file stem, figure) for every plot of the report."""
    drawn = [
        (f"scaling_{model}_{reference}", scaling_figure(run, model, reference, baselines))
        for model, reference in sorted({(c.key.model, c.key.reference) for c in run.curves})
    ]
    if run.curves:
        drawn.append(("residuals", residual_figure(run)))
    for index, gap in enumerate(run.gaps):
        drawn.append((f"gap_{index}_{gap.faster}_{gap.slower}_{gap.reference}", gap_figure(run, gap)))
    if (calibration := calibration_figure(run)) is not None:
        drawn.append(("calibration", calibration))
    if (rounds := rounds_figure(run)) is not None:
        drawn.append(("rounds", rounds))
    return drawn


def write_plots(run: FitRun, out: Path, baselines: pd.DataFrame) -> list[Path]:
    """Every plot of the report under `out`, as PNG and SVG; returns the files written."""
    return [path for stem, figure in figures(run, baselines) for path in _save(figure, out, stem)]
