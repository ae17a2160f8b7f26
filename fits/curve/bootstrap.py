"""Seed bootstrap for every law, vectorised: resample whole runs (or each point's seeds), refit
all the resampled curves at once with the batched solver (`fits.curve.solve`), started at the point
fit. The refits replace the parametric draws of a curve's `Ensemble`, so tables, plots and gaps
show the same bootstrap bands."""

import numpy as np

from fits.curve.fit import CurvePoints, FitResult, point_weights
from fits.curve.laws import LAWS
from fits.curve.solve import least_squares

__all__ = ["bootstrap_refits", "resampled_means"]


def resampled_means(points: CurvePoints, draws: int, rng: np.random.Generator) -> np.ndarray:
    """(draws, m) seed means after resampling with replacement: whole runs when the points are
    checkpoints of the same runs (they are correlated), else each point's replicates.

    Deviations from each mean are first inflated by sqrt(n / (n - 1)), so that resampling n
    seeds does not shrink the seed variance by (n - 1) / n (with 3 seeds, by a third).
    """
    if points.run_values is not None:
        runs = points.run_values
        n = len(runs)
        inflated = runs.mean(axis=0) + (runs - runs.mean(axis=0)) * (np.sqrt(n / (n - 1)) if n > 1 else 1.0)
        return inflated[rng.integers(n, size=(draws, n))].mean(axis=1)
    columns = []
    for values in points.replicates:
        n = len(values)
        inflated = values.mean() + (values - values.mean()) * (np.sqrt(n / (n - 1)) if n > 1 else 1.0)
        picks = rng.integers(n, size=(draws, n))
        columns.append(inflated[picks].mean(axis=1))
    return np.column_stack(columns)


def bootstrap_refits(
    points: CurvePoints, fits: dict[str, FitResult], draws: int = 1000, seed: int = 0
) -> dict[str, np.ndarray]:
    """Law -> (draws, p) refits to the same seed-resampled curves (paired across laws)."""
    means = resampled_means(points, draws, np.random.default_rng(seed))
    refits = {}
    for name, fit in fits.items():
        start = np.array([[fit.values[p] for p in fit.params]])
        lower = np.array([fit.bounds[p][0] for p in fit.params])
        upper = np.array([fit.bounds[p][1] for p in fit.params])
        solution = least_squares(
            LAWS[name].function,
            points.samples,
            means,
            point_weights(points),
            np.repeat(start, draws, 0),
            lower,
            upper,
        )
        refits[name] = solution.theta
    return refits
