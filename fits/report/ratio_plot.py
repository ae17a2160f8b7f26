"""R against the level: a gap read at every level both curves reach, so that a reader sees at a
glance whether one ratio stands for the pair (a flat row of bars) or hides a trend or a crossing
(bars that slope, or straddle the line R = 1)."""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib import ticker

from fits.curve.level import LEVEL
from fits.run.results import GapEstimate

__all__ = ["draw_ratio_by_level"]


def draw_ratio_by_level(axes: plt.Axes, gap: GapEstimate) -> None:
    """R at each level of `gap.ratio_curve` with its interval (an open end drawn to the axis
    edge), the line R = 1, and the gap's own level when it has a ratio."""
    rows = gap.ratio_curve
    levels = np.array([row["target"] for row in rows])
    ratios = np.array([row["ratio"] for row in rows])
    lows = np.array([row["interval"][0] for row in rows])
    highs = np.array([row["interval"][1] for row in rows])
    finite = np.concatenate([ratios, lows[lows > 0], highs[np.isfinite(highs)], [1.0]])
    bottom, top = finite.min() / 1.5, finite.max() * 1.5
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
    axes.axhline(1.0, color="tab:red", ls="--", lw=0.8, label="R = 1: the same samples")
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
