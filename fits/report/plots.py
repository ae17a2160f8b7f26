"""Scaling plots (PNG and SVG) from fitted results; nothing here refits.

- alignment vs samples per model and reference: every seed as a dot, means with the seed sd, the
  law mixture solid inside the data and dashed beyond, the 95% CI filled and the 95% PI hatched,
  held-out means hollow, each forecast a diamond with its PI, random init, chance and the
  permutation null as labelled lines, published points (same reference and eval set) as stars,
  and the flags written under the axes;
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

from fits.curve.curveset import CurveFit
from fits.curve.level import LEVEL, Z
from fits.report.ratio_plot import draw_ratio_by_level
from fits.report.rounds_plot import rounds_figure
from fits.run.results import FitRun, GapEstimate

__all__ = ["calibration_figure", "figures", "gap_figure", "residual_figure", "scaling_figure", "write_plots"]

COLOURS = {"jepa_good": "tab:blue", "jepa_bad": "tab:orange", "ntp": "tab:green"}
MARKERS = ("o", "s", "^", "v", "D", "P")
DPI = 120
Z_EDGE = 5.0  # calibration cells past |z| = 5 are drawn at the edge and counted
plt.rcParams["svg.hashsalt"] = "orch"  # stable ids inside the SVGs


def _colour(objective: str) -> str:
    return COLOURS.get(objective, "tab:gray")


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


def _draw_curve(axes: plt.Axes, curve: CurveFit, colour: str) -> None:
    points, label = curve.points, curve.key.objective
    for samples, values in zip(points.samples, points.replicates, strict=True):
        axes.scatter(np.full(len(values), samples), values, s=7, alpha=0.35, color=colour, lw=0)
    spread = points.sigma * np.sqrt(points.seeds)
    axes.errorbar(
        points.samples,
        points.mean,
        yerr=spread,
        fmt="o",
        color=colour,
        ms=3.5,
        capsize=2,
        label=f"{label}: mean ± seed sd ({int(points.seeds.max())} seeds)",
    )
    _draw_band(axes, curve, colour, label)
    for held in curve.held_out:
        axes.scatter([held.samples], [held.observed], s=45, facecolors="none", edgecolors=colour, lw=1.4)
    _draw_forecasts(axes, curve, colour)
    if curve.random_init is not None:
        axes.axhline(
            curve.random_init,
            color=colour,
            ls=":",
            lw=1,
            label=f"{label}: random init {curve.random_init:.3g}",
        )
    if curve.null_p95 is not None:
        axes.axhline(
            curve.null_p95, color=colour, ls="-.", lw=0.8, alpha=0.6, label=f"{label}: permutation null p95"
        )


def _draw_band(axes: plt.Axes, curve: CurveFit, colour: str, label: str) -> None:
    """The mixture's CI (shaded) and PI (hatched) along the curve, and its mean: solid over the
    data, dashed past it."""
    points = curve.points
    grid = np.array([b.samples for b in curve.band])
    ci = np.array([b.ci for b in curve.band])
    pi = np.array([b.pi for b in curve.band])
    axes.fill_between(
        grid, ci[:, 0], ci[:, 1], color=colour, alpha=0.25, lw=0, label=f"{label}: {LEVEL:.0%} CI of the mean"
    )
    axes.fill_between(
        grid,
        pi[:, 0],
        pi[:, 1],
        facecolor="none",
        edgecolor=colour,
        hatch="////",
        lw=0.6,
        alpha=0.6,
        label=f"{label}: {LEVEL:.0%} PI of a {curve.band[0].seeds}-seed mean",
    )
    mixture = np.array([b.prediction for b in curve.band])
    inside = grid <= points.samples[-1]
    weights = " ".join(
        f"{n} {w:.0%}" for n, w in sorted(curve.ensemble.weights.items(), key=lambda i: -i[1]) if w >= 0.005
    )
    axes.plot(grid[inside], mixture[inside], "-", color=colour, label=f"{label}: laws ({weights})")
    axes.plot(grid[~inside], mixture[~inside], "--", color=colour)


def _draw_forecasts(axes: plt.Axes, curve: CurveFit, colour: str) -> None:
    for forecast in curve.forecasts:
        if forecast.withheld:
            axes.annotate(
                "withheld", (forecast.samples, forecast.pi[1]), color=colour, fontsize=6, ha="center"
            )
            continue
        # The PI as a bar and the prediction as a diamond: with few points the mixture's mean
        # may lie outside its draws' interval, which an error bar could not draw.
        low, high = forecast.pi
        axes.plot([forecast.samples] * 2, [low, high], "-", color=colour, lw=1)
        axes.plot([forecast.samples] * 2, [low, high], "_", color=colour, ms=6)
        axes.plot([forecast.samples], [forecast.prediction], "D", color=colour, mfc="white", ms=5)


def _y_range(curves: list[CurveFit], published: list, span: tuple[float, float]) -> tuple[float, float]:
    """The measured points, the forecast intervals and the published points, padded, in the metric's range."""
    values = [v for c in curves for values in c.points.replicates for v in values]
    values += [edge for c in curves for f in c.forecasts if not f.withheld for edge in f.pi]
    values += [c.random_init for c in curves if c.random_init is not None] + [row.value for row in published]
    low, high = min(values), max(values)
    pad = 0.08 * (high - low or abs(high) or 1.0)
    return max(span[0], low - pad), min(span[1], high + pad)


def _flag_lines(curves: list[CurveFit]) -> list[str]:
    """Each curve's distinct flags (its heaviest law's and its forecasts'), for under the axes."""
    lines = []
    for curve in curves:
        flags = dict.fromkeys(
            [*curve.fit.flags, *(f.split(":")[0] for c in curve.forecasts for f in c.flags)]
        )
        if flags:
            lines.append(f"{curve.key.objective}: " + ", ".join(flags))
    return lines


def _published(run: FitRun, baselines: pd.DataFrame, model: str, reference: str, eval_sets: set[str]) -> list:
    """Published points of the same model (`CurveSet.names_model`) measured against the same
    reference on the same eval set, else none."""
    if baselines.empty:
        return []
    rows = baselines[
        (baselines.metric == run.options.metric)
        & baselines.samples.notna()
        & (baselines.reference == reference)
        & baselines.eval_set.isin(eval_sets)
    ]
    return [row for row in rows.itertuples() if run.curves.names_model(row.model, model)]


def scaling_figure(run: FitRun, model: str, reference: str, baselines: pd.DataFrame) -> plt.Figure:
    curves = [c for c in run.curves if (c.key.model, c.key.reference) == (model, reference)]
    figure, axes = plt.subplots(figsize=(7.5, 4.5))
    for curve in curves:
        _draw_curve(axes, curve, _colour(curve.key.objective))
    published = _published(run, baselines, model, reference, {c.key.eval_set for c in curves})
    for row in published:
        axes.scatter(
            [row.samples],
            [row.value],
            marker="*",
            s=90,
            color=_colour(row.objective),
            edgecolors="k",
            label=f"published: {row.model} ({row.source})",
        )
    for chance in {c.chance for c in curves} - {None}:
        axes.axhline(chance, color="0.3", ls="--", lw=0.8, label=f"chance {chance:.3g}")
    samples = [s for c in curves for s in c.points.samples] + [f.samples for c in curves for f in c.forecasts]
    samples += [row.samples for row in published]
    axes.set_xlim(min(samples) / 1.6, max(samples) * 1.6)
    axes.set_ylim(*_y_range(curves, published, run.options.span))
    axes.set_xscale("log")
    axes.set_xlabel("samples seen")
    axes.set_ylabel(run.options.metric)
    axes.set_title(
        f"{run.sweep}: {model} vs {reference} (diamonds: forecasts with their {LEVEL:.0%} PI)", fontsize=9
    )
    axes.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    if lines := _flag_lines(curves):
        figure.text(
            0.01, -0.02, "flags  " + "\n       ".join(lines), fontsize=6, va="top", family="monospace"
        )
    return figure


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
            color=_colour(curve.key.objective),
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


def gap_figure(run: FitRun, gap: GapEstimate) -> plt.Figure:
    """The two curves and the crossing, or the reasons as text when not identifiable; R
    against the level beside them wherever both curves cross a level inside their data."""
    if not gap.identifiable:
        lines = 2 + len(gap.reasons)
        if not gap.ratio_curve:
            figure = plt.figure(figsize=(7.5, 0.7 + 0.25 * lines))
            figure.text(0.01, 0.95, _gap_text(gap), fontsize=8, va="top", wrap=True)
            return figure
        figure, axes = plt.subplots(figsize=(7.5, 3.5 + 0.25 * lines))
        figure.subplots_adjust(top=3.5 / (3.5 + 0.25 * lines) - 0.08)
        figure.text(0.01, 0.99, _gap_text(gap), fontsize=8, va="top", wrap=True)
        draw_ratio_by_level(axes, gap)
        return figure
    figure, (axes, by_level) = plt.subplots(1, 2, figsize=(12, 4), width_ratios=(3, 2))
    if gap.ratio_curve:
        draw_ratio_by_level(by_level, gap)
    else:
        by_level.set_axis_off()
    for curve in run.curves:
        if curve.key.objective in (gap.faster, gap.slower) and (
            curve.key.model,
            curve.key.reference,
        ) == (gap.model, gap.reference):
            colour = _colour(curve.key.objective)
            axes.errorbar(
                curve.points.samples,
                curve.points.mean,
                yerr=curve.points.sigma,
                fmt="o",
                color=colour,
                ms=3,
                label=f"{curve.key.objective}: mean ± se",
            )
            grid = np.array([b.samples for b in curve.band])
            inside = grid <= curve.points.samples[-1]
            axes.plot(grid[inside], np.array([b.prediction for b in curve.band])[inside], color=colour)
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
