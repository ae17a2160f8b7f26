"""R against the level: a gap read at every level both curves reach, so that a reader sees at a
glance whether one ratio stands for the pair (a flat row of bars) or hides a trend or a crossing
(bars that slope, or straddle the line R = 1). The level axis spans every level either curve
reaches, each curve's range drawn along its foot, so that a sliver of shared levels reads as one."""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import ticker, transforms

from fits.curve.level import LEVEL
from fits.report.scaling_plot import colour
from fits.run.results import GapEstimate

__all__ = ["draw_ratio_by_level"]


def draw_ratio_by_level(axes: plt.Axes, gap: GapEstimate, reached: dict[str, tuple[float, float]]) -> None:
    """R at each level of `gap.ratio_curve` with its interval (an open end drawn to the axis
    edge and marked), the line R = 1, the gap's own level when it has a ratio, and the levels
    each curve reaches (`reached`: objective -> lowest and highest seed mean)."""
    rows = gap.ratio_curve
    levels = np.array([row["target"] for row in rows])
    ratios = np.array([row["ratio"] for row in rows])
    lows = np.array([row["interval"][0] for row in rows])
    highs = np.array([row["interval"][1] for row in rows])
    finite = np.concatenate([ratios, lows[lows > 0], highs[np.isfinite(highs)], [1.0]])
    bottom, top = finite.min() / 1.5, finite.max() * 1.5
    open_low, open_high = lows < bottom, highs > top
    lows, highs = np.clip(lows, bottom, top), np.clip(highs, bottom, top)
    axes.errorbar(
        levels,
        ratios,
        yerr=[ratios - lows, highs - ratios],
        fmt="o-",
        color="k",
        ms=3,
        lw=1,
        capsize=3,
        label=f"R with its {LEVEL:.0%} interval",
    )
    for ends, value, marker in ((open_low, bottom, "v"), (open_high, top, "^")):
        axes.scatter(levels[ends], np.full(ends.sum(), value), marker=marker, color="k", s=18, clip_on=False)
    if (open_low | open_high).any():
        axes.scatter([], [], marker="^", color="k", s=18, label="open end: no bound that way")
    axes.axhline(1.0, color="tab:red", ls="--", lw=0.8, label="R = 1: the same samples")
    _draw_levels_reached(axes, levels, reached)
    if gap.ratio is not None and gap.identifiable:
        axes.axvline(gap.target, color="k", ls=":", lw=1, label=f"the gap's level {gap.target:.3g}")
    axes.set_yscale("log")
    axes.set_ylim(bottom, top)
    ratio = ticker.FuncFormatter(lambda value, _: f"{value:.3g}x")
    axes.yaxis.set_major_formatter(ratio)
    axes.yaxis.set_minor_formatter(ratio if top / bottom < 20 else ticker.NullFormatter())
    axes.tick_params(axis="y", which="minor", labelsize=7)
    axes.set_xlabel(f"level ({gap.metric})")
    axes.set_ylabel(f"R = N_{gap.slower} / N_{gap.faster}", fontsize=8)
    axes.set_title("R against the level", fontsize=9)
    axes.legend(fontsize=6, loc="best")


def _draw_levels_reached(axes: plt.Axes, levels: np.ndarray, reached: dict[str, tuple[float, float]]) -> None:
    """Each curve's levels as a bar along the axis' foot, the x-axis spanning them all, and the
    share of them R is read across said when it is a sliver."""
    foot = transforms.blended_transform_factory(axes.transData, axes.transAxes)
    ends = [*levels, *(end for span in reached.values() for end in span)]
    low, high = min(ends), max(ends)
    pad = 0.04 * (high - low) or 0.04 * abs(high) or 0.01
    axes.set_xlim(low - pad, high + pad)
    for place, (objective, (first, last)) in enumerate(sorted(reached.items())):
        axes.plot(
            [first, last],
            [0.025 + 0.035 * place] * 2,
            transform=foot,
            color=colour(objective),
            lw=2.5,
            solid_capstyle="butt",
            label=f"{objective} reaches {first:.3g} to {last:.3g}",
        )
    share = (levels.max() - levels.min()) / (high - low) if high > low else 1.0
    if share < 0.05:
        axes.text(
            0.5,
            0.97,
            f"R is read across {_apart(levels.min(), levels.max())} only: "
            f"{100 * share:.2g}% of the levels either curve reaches",
            transform=axes.transAxes,
            ha="center",
            va="top",
            fontsize=7,
        )


def _apart(low: float, high: float) -> str:
    """'low to high' with the fewest digits (4 at least) that tell them apart."""
    digits = next((d for d in range(4, 10) if f"{low:.{d}g}" != f"{high:.{d}g}"), 10)
    return f"{low:.{digits}g} to {high:.{digits}g}"
