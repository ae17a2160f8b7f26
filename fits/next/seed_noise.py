"""An objective's seed noise against S, for planning runs (`fits.next.beliefs`): what the k-seed mean
of a run not yet made would scatter by."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fits.curve.curveset import CurveFit

__all__ = ["Noise", "seed_noise"]


@dataclass(frozen=True)
class Noise:
    """An objective's seed standard deviation against S: at_middle * (S / middle)^slope."""

    at_middle: float
    middle: float
    slope: float
    source: str

    def sd(self, samples) -> np.ndarray:
        return self.at_middle * (np.asarray(samples, dtype=float) / self.middle) ** self.slope


def seed_noise(curves: Sequence[CurveFit]) -> Noise | None:
    """The seed noise of these curves (one objective's) against S: a log-linear fit of the seed
    sd on S where 3 or more sizes have 2 or more seeds and the trend is beyond chance (2 SE),
    pooled otherwise, and the heaviest laws' residual scatter where no size has 2 seeds. None
    when nothing estimates it."""
    sizes, sds, dfs = [], [], []
    for points in (c.seen for c in curves):
        for samples, values in zip(points.samples, points.replicates, strict=True):
            if len(values) > 1:
                sizes.append(samples)
                sds.append(max(float(np.std(values, ddof=1)), 1e-9))
                dfs.append(len(values) - 1)
    if sizes:
        sizes, sds, dfs = np.array(sizes), np.array(sds), np.array(dfs, dtype=float)
        middle = float(np.exp(np.average(np.log(sizes), weights=dfs)))
        pooled = float(np.sqrt(np.average(sds**2, weights=dfs)))
        replicates = f"{int(dfs.sum())} seed replicates"
        if len(np.unique(sizes)) < 3:
            return Noise(pooled, middle, 0.0, f"pooled over {replicates}")
        x = np.log(sizes / middle)
        slope = float(np.polyfit(x, np.log(sds), 1, w=np.sqrt(dfs))[0])
        # ln of a sample sd on df degrees of freedom has variance about 1 / (2 df)
        error = 1.0 / np.sqrt(2 * np.sum(dfs * (x - np.average(x, weights=dfs)) ** 2))
        if abs(slope) < 2 * error:
            return Noise(pooled, middle, 0.0, f"pooled over {replicates} (no trend in S beyond chance)")
        return Noise(pooled, middle, float(np.clip(slope, -0.5, 0.5)), f"fitted against S over {replicates}")
    squares, dof = 0.0, 0
    for curve in curves:
        fit = curve.ensemble.heaviest
        squares += float(np.sum((curve.points.mean - fit.predict(curve.points.samples)) ** 2))
        dof += fit.dof
    if dof <= 0:
        return None
    middle = float(np.exp(np.mean([np.log(c.points.samples).mean() for c in curves])))
    return Noise(float(np.sqrt(squares / dof)), middle, 0.0, "one seed per size: the laws' residual scatter")
