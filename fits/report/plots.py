"""Scaling plots (PNG and SVG) from fitted results; nothing here refits.

- alignment vs samples per model and reference: seeds as faint dots, means +- sd, the fit solid
  inside its range and dashed beyond, CI and PI shades, held-out means hollow, the random-init
  level dotted, published points from the baselines table as stars;
- residuals in seed-noise units; the gap plot; the calibration plot.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from fits.level import LEVEL, Z
from fits.results import CurveFit, FitRun

__all__ = ["write_plots"]

COLOURS = {"jepa_good": "tab:blue", "jepa_bad": "tab:orange", "ntp": "tab:green"}


def _save(figure: plt.Figure, out: Path, stem: str) -> list[Path]:
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    for path in paths:
        figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(figure)
    return paths


def _draw_curve(axes: plt.Axes, curve: CurveFit, colour: str) -> None:
    points = curve.points
    label = curve.key["objective"]
    for samples, values in zip(points.samples, points.replicates, strict=True):
        axes.scatter(np.full(len(values), samples), values, s=8, alpha=0.25, color=colour)
    spread = points.sigma * np.sqrt(points.seeds)
    axes.errorbar(
        points.samples,
        points.mean,
        yerr=spread,
        fmt="o",
        color=colour,
        ms=4,
        capsize=2,
        label=f"{label} (seed sd; {_weights(curve)})",
    )
    high = points.samples[-1]
    grid = np.array([b.samples for b in curve.band])
    for name, shade in (("pi", 0.08), ("ci", 0.2)):
        low_edge = [getattr(b, name)[0] for b in curve.band]
        high_edge = [getattr(b, name)[1] for b in curve.band]
        axes.fill_between(
            grid, low_edge, high_edge, color=colour, alpha=shade, label=f"{label} {LEVEL:.0%} {name.upper()}"
        )
    mixture = np.array([b.prediction for b in curve.band])
    inside = grid <= high
    axes.plot(grid[inside], mixture[inside], "-", color=colour)
    axes.plot(grid[~inside], mixture[~inside], "--", color=colour)
    for held in curve.held_out:
        axes.scatter(
            [held.samples], [held.observed], s=50, facecolors="none", edgecolors=colour, linewidths=1.5
        )
    if curve.random_init is not None:
        axes.axhline(curve.random_init, color=colour, ls=":", lw=1)
    if curve.null_p95 is not None:
        axes.axhline(curve.null_p95, color=colour, ls="-.", lw=0.8, alpha=0.6)


def _weights(curve: CurveFit) -> str:
    """The law weights, heaviest first, for the legend."""
    ranked = sorted(curve.ensemble.weights.items(), key=lambda item: -item[1])
    return " ".join(f"{name} {weight:.0%}" for name, weight in ranked if weight >= 0.005)


def _scaling_plot(run: FitRun, model: str, reference: str, baselines: pd.DataFrame, out: Path) -> list[Path]:
    figure, axes = plt.subplots(figsize=(7, 4.5))
    for curve in run.curves:
        if (curve.key["model"], curve.key["reference"]) == (model, reference):
            _draw_curve(axes, curve, COLOURS.get(curve.key["objective"], "tab:gray"))
    eval_sets = {
        c.key["eval_set"] for c in run.curves if (c.key["model"], c.key["reference"]) == (model, reference)
    }
    published = (
        baselines[
            (baselines.metric == run.options.metric)
            & baselines.samples.notna()
            & (baselines.reference == reference)
            & baselines.eval_set.isin(eval_sets)
        ]
        if len(baselines)
        else baselines
    )  # only points measured against the same reference on the same eval set
    for row in published.itertuples():
        axes.scatter(
            [row.samples],
            [row.value],
            marker="*",
            s=90,
            color=COLOURS.get(row.objective, "k"),
            edgecolors="k",
            label=f"{row.model} ({row.source})",
        )
    observed = [
        v
        for c in run.curves
        if (c.key["model"], c.key["reference"]) == (model, reference)
        for v in c.points.mean
    ]
    if observed:  # keep the data readable when far extrapolations widen the bands
        axes.set_ylim(max(min(observed) - 0.05, -0.02), min(2 * max(observed) + 0.05, 1.0))
    chances = {c.chance for c in run.curves if (c.key["model"], c.key["reference"]) == (model, reference)}
    for chance in chances - {None}:
        axes.axhline(chance, color="0.4", ls="--", lw=0.8, label=f"chance {chance:.3g}")
    axes.set_xscale("log")
    axes.set_xlabel("samples seen")
    axes.set_ylabel(run.options.metric)
    axes.set_title(
        f"{run.sweep}: {model} vs {reference}\n"
        "dotted: random init; dash-dot: 95% permutation null; hollow: held out",
        fontsize=9,
    )
    axes.legend(fontsize=6, loc="best")
    return _save(figure, out, f"scaling_{model}_{reference}")


def _residual_plot(run: FitRun, out: Path) -> list[Path]:
    figure, axes = plt.subplots(figsize=(7, 3))
    for curve in run.curves:
        colour = COLOURS.get(curve.key["objective"], "tab:gray")
        axes.plot(
            curve.points.samples,
            curve.fit.residuals,
            "o-",
            color=colour,
            ms=3,
            alpha=0.7,
            label=f"{curve.key['objective']} {curve.key['reference']}",
        )
    axes.axhline(0, color="k", lw=0.8)
    for z in (-Z, Z):
        axes.axhline(z, color="k", lw=0.5, ls="--")
    axes.set_xscale("log")
    axes.set_xlabel("samples seen")
    axes.set_ylabel("residual (seed-noise z)")
    axes.legend(fontsize=6)
    return _save(figure, out, "residuals")


def _gap_plot(run: FitRun, out: Path) -> list[Path]:
    paths = []
    for index, gap in enumerate(run.gaps):
        if not gap.identifiable:
            continue  # the report says why in words; a plot would draw a number it lacks
        figure, axes = plt.subplots(figsize=(7, 4))
        for curve in run.curves:
            if curve.key["objective"] in (gap.faster, gap.slower) and (
                curve.key["model"],
                curve.key["reference"],
            ) == (gap.model, gap.reference):
                colour = COLOURS.get(curve.key["objective"], "tab:gray")
                grid = np.array([b.samples for b in curve.band])
                inside = grid <= curve.points.samples[-1]
                mixture = np.array([b.prediction for b in curve.band])
                axes.plot(grid[inside], mixture[inside], color=colour, label=curve.key["objective"])
                axes.errorbar(
                    curve.points.samples,
                    curve.points.mean,
                    yerr=curve.points.sigma,
                    fmt="o",
                    color=colour,
                    ms=3,
                )
        axes.axhline(gap.target, color="k", ls=":", lw=1, label="a*")
        low, high = gap.ci
        samples_a = gap.samples_a
        axes.errorbar(
            [samples_a],
            [gap.target],
            xerr=[[samples_a - gap.samples_b / high], [gap.samples_b / low - samples_a]],
            fmt="s",
            color="k",
            capsize=4,
            label="N_A* (95%)",
        )
        axes.scatter([gap.samples_b], [gap.target], marker="D", color="k")
        axes.set_xscale("log")
        axes.set_title(
            f"R = {gap.ratio:.3g}x [{low:.3g}, {high:.3g}]  ({gap.faster} vs {gap.slower}, {gap.reference})"
        )
        axes.set_xlabel("samples seen")
        axes.set_ylabel(gap.metric)
        axes.legend(fontsize=7)
        paths += _save(figure, out, f"gap_{index}_{gap.faster}_{gap.slower}_{gap.reference}")
    return paths


def _calibration_plot(run: FitRun, out: Path) -> list[Path]:
    zs = np.array([h.z for c in run.curves for h in c.held_out])
    if zs.size == 0:
        return []
    figure, axes = plt.subplots(figsize=(5, 3))
    axes.hist(zs, bins=np.linspace(-5, 5, 21), color="tab:gray")
    for z in (-Z, Z):
        axes.axvline(z, color="k", ls="--", lw=0.8)
    within = np.mean([h.within_seed_noise for c in run.curves for h in c.held_out])
    axes.set_title(f"held-out z (n={zs.size}): {within:.0%} inside the {LEVEL:.0%} PI")
    axes.set_xlabel("z = (observed - forecast) / sigma_pred")
    return _save(figure, out, "calibration")


def write_plots(run: FitRun, out: Path, baselines: pd.DataFrame) -> list[Path]:
    """Every plot of the report under `out`; returns the files written."""
    paths = []
    for model, reference in sorted({(c.key["model"], c.key["reference"]) for c in run.curves}):
        paths += _scaling_plot(run, model, reference, baselines, out)
    if run.curves:
        paths += _residual_plot(run, out)
    paths += _gap_plot(run, out)
    paths += _calibration_plot(run, out)
    return paths
