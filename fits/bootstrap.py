"""Seed bootstrap for the default law, vectorised: resample each point's seeds, refit every
replicate at once by variable projection (`laws.variable_projection`), and read bands off the
refits' percentiles."""

import numpy as np

from fits.fit import CurvePoints
from fits.laws import S_REF, saturating, variable_projection
from fits.level import LEVEL, tails

__all__ = ["bootstrap_band", "bootstrap_gap", "bootstrap_saturating"]


def _resampled_means(points: CurvePoints, draws: int, rng: np.random.Generator) -> np.ndarray:
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


def bootstrap_saturating(points: CurvePoints, draws: int = 1000, seed: int = 0) -> np.ndarray:
    """(draws, 3) refits (a_inf, b, alpha) of the saturating law to seed-resampled curves."""
    rng = np.random.default_rng(seed)
    return variable_projection(points.samples, _resampled_means(points, draws, rng), 1.0 / points.sigma**2)


def bootstrap_band(
    refits: np.ndarray, samples: float, sigma_seed: float, seeds: int, level: float = LEVEL, seed: int = 0
) -> tuple[tuple[float, float], tuple[float, float]]:
    """(CI, PI) at S from the refits' percentiles; the PI adds the noise of a `seeds`-seed mean."""
    rng = np.random.default_rng(seed)
    predictions = saturating(samples, refits[:, 0], refits[:, 1], refits[:, 2])
    noisy = predictions + rng.normal(0, sigma_seed / np.sqrt(seeds), predictions.shape)
    ci, pi = np.percentile(predictions, tails(level)), np.percentile(noisy, tails(level))
    return (float(ci[0]), float(ci[1])), (float(pi[0]), float(pi[1]))


def bootstrap_gap(
    points_a: CurvePoints, points_b: CurvePoints, samples_b: float, draws: int = 1000, level: float = LEVEL
) -> tuple[tuple[float, float] | None, float]:
    """Percentile interval of R = S_B / N_A* over paired seed-bootstrap refits of both curves,
    and the share of draws where A's refit never reaches B's level (those have no R)."""
    a = bootstrap_saturating(points_a, draws, seed=1)
    b = bootstrap_saturating(points_b, draws, seed=2)
    target = saturating(samples_b, b[:, 0], b[:, 1], b[:, 2])
    reachable = (target < a[:, 0]) & (a[:, 1] > 0)
    # Invert a_inf - b (N / S_REF)^-alpha = target for N.
    with np.errstate(divide="ignore", invalid="ignore"):
        needed = S_REF * ((a[:, 0] - target) / a[:, 1]) ** (-1 / a[:, 2])
    ratios = samples_b / needed[reachable]
    if ratios.size < draws / 2:
        return None, float(1 - reachable.mean())
    low, high = np.percentile(ratios, tails(level))
    return (float(low), float(high)), float(1 - reachable.mean())
