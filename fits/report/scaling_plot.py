"""The scaling plot of one model against one reference: every seed as a dot, means with the seed
sd, the law mixture solid inside the data and dashed beyond, the 95% CI filled and the 95% PI
hatched, held-out means hollow, each forecast a diamond with its PI, random init, chance and the
permutation null as lines, published points (same reference and eval set) as stars, and the
flags written under the axes.

The x-axis covers the data. A forecast or published point far past it (`FAR` times the largest
measured size: `--predict 900M` on a 64K sweep) is drawn in a narrow panel of its own, across a
broken axis, so the measured curve keeps the width. The legend has one entry per objective (its
colour, seeds and laws) and explains each mark's style once."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter

from fits.curve.curveset import CurveFit
from fits.curve.level import LEVEL
from fits.run.results import FitRun

__all__ = ["COLOURS", "colour", "draw_curve", "scaling_figure"]

COLOURS = {"jepa_good": "tab:blue", "jepa_bad": "tab:orange", "ntp": "tab:green"}
FAR = 8.0  # past this many times the largest measured size, a point goes to the panel beyond
STYLE = "0.35"  # the grey of the legend's style entries


def colour(objective: str) -> str:
    return COLOURS.get(objective, "tab:gray")


def draw_curve(axes: plt.Axes, curve: CurveFit, tint: str) -> None:
    """One curve's marks (labelled by kind: `scaling_figure` builds the legend apart)."""
    points, label = curve.points, curve.key.objective
    for samples, values in zip(points.samples, points.replicates, strict=True):
        axes.scatter(np.full(len(values), samples), values, s=7, alpha=0.35, color=tint, lw=0)
    spread = points.sigma * np.sqrt(points.seeds)
    axes.errorbar(points.samples, points.mean, yerr=spread, fmt="o", color=tint, ms=3.5, capsize=2)
    _draw_band(axes, curve, tint, label)
    for held in curve.held_out:
        axes.scatter([held.samples], [held.observed], s=45, facecolors="none", edgecolors=tint, lw=1.4)
    _draw_forecasts(axes, curve, tint)
    if curve.random_init is not None:
        axes.axhline(curve.random_init, color=tint, ls=":", lw=1, label=f"{label}: random init")
    if curve.null_p95 is not None:
        axes.axhline(curve.null_p95, color=tint, ls="-.", lw=0.8, alpha=0.6, label=f"{label}: null p95")


def _draw_band(axes: plt.Axes, curve: CurveFit, tint: str, label: str) -> None:
    """The mixture's CI (shaded) and PI (hatched) along the curve, and its mean: solid over the
    data, dashed past it."""
    grid = np.array([b.samples for b in curve.band])
    ci, pi = np.array([b.ci for b in curve.band]), np.array([b.pi for b in curve.band])
    axes.fill_between(grid, ci[:, 0], ci[:, 1], color=tint, alpha=0.25, lw=0, label=f"{label}: CI")
    axes.fill_between(
        grid,
        pi[:, 0],
        pi[:, 1],
        facecolor="none",
        edgecolor=tint,
        hatch="////",
        lw=0.6,
        alpha=0.6,
        label=f"{label}: PI",
    )
    mixture = np.array([b.prediction for b in curve.band])
    inside = grid <= curve.points.samples[-1]
    axes.plot(grid[inside], mixture[inside], "-", color=tint)
    axes.plot(grid[~inside], mixture[~inside], "--", color=tint)


def _draw_forecasts(axes: plt.Axes, curve: CurveFit, tint: str) -> None:
    for forecast in curve.forecasts:
        if forecast.withheld:
            axes.annotate("withheld", (forecast.samples, forecast.pi[1]), color=tint, fontsize=6, ha="center")
            continue
        # The PI as a bar and the prediction as a diamond: with few points the mixture's mean
        # may lie outside its draws' interval, which an error bar could not draw.
        low, high = forecast.pi
        axes.plot([forecast.samples] * 2, [low, high], "-", color=tint, lw=1)
        axes.plot([forecast.samples] * 2, [low, high], "_", color=tint, ms=6)
        axes.plot([forecast.samples], [forecast.prediction], "D", color=tint, mfc="white", ms=5)


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


def _legend(curves: list[CurveFit], published: list, chances: set[float]) -> list:
    """One entry per objective, then each mark's style once (grey), for the marks drawn."""
    handles = []
    for curve in curves:
        weights = sorted(curve.ensemble.weights.items(), key=lambda item: -item[1])
        laws = " ".join(f"{name} {weight:.0%}" for name, weight in weights if weight >= 0.005)
        seeds = int(curve.points.seeds.max())
        handles.append(
            Line2D(
                [],
                [],
                color=colour(curve.key.objective),
                lw=6,
                label=f"{curve.key.objective} ({seeds} seeds; laws {laws})",
            )
        )
    seeds = curves[0].band[0].seeds if curves and curves[0].band else 1
    handles += [
        Line2D([], [], color=STYLE, marker="o", ms=3.5, ls="", label="mean ± seed sd; dots: each seed"),
        Line2D([], [], color=STYLE, label="laws' mixture (dashed past the data)"),
        Patch(color=STYLE, alpha=0.25, lw=0, label=f"{LEVEL:.0%} CI of the mean"),
        Patch(
            facecolor="none", edgecolor=STYLE, hatch="////", label=f"{LEVEL:.0%} PI of a {seeds}-seed mean"
        ),
    ]
    marks = [
        (any(c.held_out for c in curves), {"marker": "o", "mfc": "none", "ms": 6, "ls": ""}, "held out"),
        (
            any(c.forecasts for c in curves),
            {"marker": "D", "mfc": "white", "ms": 5},
            f"forecast, {LEVEL:.0%} PI",
        ),
        (any(c.random_init is not None for c in curves), {"ls": ":"}, "random init"),
        (any(c.null_p95 is not None for c in curves), {"ls": "-."}, "permutation null p95"),
    ]
    handles += [Line2D([], [], color=STYLE, label=text, **style) for shown, style, text in marks if shown]
    handles += [
        Line2D([], [], color="0.3", ls="--", lw=0.8, label=f"chance {chance:.3g}")
        for chance in sorted(chances)
    ]
    for name in dict.fromkeys(f"published: {row.model} ({row.source})" for row in published):
        handles.append(Line2D([], [], marker="*", ms=9, ls="", color=STYLE, mec="k", label=name))
    return handles


def _panels(far: list[float]) -> tuple[plt.Figure, list[plt.Axes]]:
    """One axes, or two across a broken x-axis where points lie far past the data."""
    if not far:
        figure, axes = plt.subplots(figsize=(7.5, 4.5))
        return figure, [axes]
    figure, (near, beyond) = plt.subplots(
        1, 2, figsize=(7.5, 4.5), sharey=True, width_ratios=(5, 1), gridspec_kw={"wspace": 0.05}
    )
    near.spines["right"].set_visible(False)
    beyond.spines["left"].set_visible(False)
    beyond.tick_params(left=False)
    for axes, x in ((near, 1.0), (beyond, 0.0)):  # the break: two short slashes on each side
        axes.plot(
            [x, x],
            [0, 1],
            transform=axes.transAxes,
            ls="",
            marker=[(-1, -1.5), (1, 1.5)],
            ms=8,
            color="k",
            mec="k",
            mew=1,
            clip_on=False,
        )
    beyond.set_xlim(min(far) / 1.6, max(far) * 1.6)
    beyond.set_xscale("log")
    beyond.xaxis.set_minor_formatter(NullFormatter())  # a minor label would crowd the break
    return figure, [near, beyond]


def scaling_figure(run: FitRun, model: str, reference: str, baselines: pd.DataFrame) -> plt.Figure:
    curves = [c for c in run.curves if (c.key.model, c.key.reference) == (model, reference)]
    published = _published(run, baselines, model, reference, {c.key.eval_set for c in curves})
    measured = [s for c in curves for s in c.points.samples] + [h.samples for c in curves for h in c.held_out]
    edge = max(measured) * FAR
    marked = [f.samples for c in curves for f in c.forecasts] + [row.samples for row in published]
    far = [s for s in marked if s > edge]
    figure, panels = _panels(far)
    chances = {c.chance for c in curves} - {None}
    for axes in panels:
        for curve in curves:
            draw_curve(axes, curve, colour(curve.key.objective))
        for row in published:
            axes.scatter(
                [row.samples], [row.value], marker="*", s=90, color=colour(row.objective), edgecolors="k"
            )
        for chance in chances:
            axes.axhline(chance, color="0.3", ls="--", lw=0.8)
    near = panels[0]
    shown = measured + [s for s in marked if s <= edge]
    near.set_xlim(min(shown) / 1.6, max(shown) * 1.6)
    near.set_ylim(*_y_range(curves, published, run.options.span))
    near.set_xscale("log")
    figure.supxlabel("samples seen" + (" (the axis breaks before the far points)" if far else ""), fontsize=9)
    near.set_ylabel(run.options.metric)
    near.set_title(f"{run.sweep}: {model} vs {reference}", fontsize=9, loc="left")
    panels[-1].legend(
        handles=_legend(curves, published, chances),
        fontsize=6,
        loc="upper left",
        bbox_to_anchor=(1.04, 1.0),
        borderaxespad=0,
    )
    if lines := _flag_lines(curves):
        figure.text(
            0.01, -0.04, "flags  " + "\n       ".join(lines), fontsize=6, va="top", family="monospace"
        )
    return figure
