"""Seed bootstrap for the default law, vectorised: resample each point's seeds, refit every
replicate at once by variable projection (for each alpha on a grid, a_inf and b in closed form,
then a parabolic step in log alpha), and read bands off the refits' percentiles."""

import numpy as np

from fits.fit import CurvePoints
from fits.laws import S_REF, saturating

__all__ = ["bootstrap_band", "bootstrap_gap", "bootstrap_saturating"]

ALPHAS = np.geomspace(0.01, 2.0, 241)  # the law's alpha bounds


def _resampled_means(points: CurvePoints, draws: int, rng: np.random.Generator) -> np.ndarray:
    """(draws, m) seed means after resampling each point's replicates with replacement.

    Deviations from each mean are first inflated by sqrt(n / (n - 1)), so that resampling n
    seeds does not shrink the seed variance by (n - 1) / n (with 3 seeds, by a third).
    """
    columns = []
    for values in points.replicates:
        n = len(values)
        inflated = values.mean() + (values - values.mean()) * (np.sqrt(n / (n - 1)) if n > 1 else 1.0)
        picks = rng.integers(n, size=(draws, n))
        columns.append(inflated[picks].mean(axis=1))
    return np.column_stack(columns)


def _bounded_linear(y: np.ndarray, x: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least squares of y ~ a_inf - b x with b >= 0 and a_inf in [max y, 1].

    y (B, 1, m) against x (G, m) or (B, 1, m): returns a_inf, b of the broadcast shape (B, G).
    """
    sw = weight.sum()
    sx, sxx = (x * weight).sum(-1), (x * x * weight).sum(-1)
    sy, sxy = (y * weight).sum(-1), (y * x * weight).sum(-1)
    det = sw * sxx - sx**2
    a = (sy * sxx - sx * sxy) / det
    b = (sy * sx - sw * sxy) / det
    negative = b < 0  # then b = 0 and a_inf is the weighted mean
    a = np.where(negative, sy / sw, a)
    b = np.where(negative, 0.0, b)
    clipped = np.clip(a, y.max(axis=-1), 1.0)  # then refit b for the clipped a_inf
    b = np.where(clipped != a, np.maximum((clipped * sx - sxy) / sxx, 0.0), b)
    return clipped, b


def bootstrap_saturating(points: CurvePoints, draws: int = 1000, seed: int = 0) -> np.ndarray:
    """(draws, 3) refits (a_inf, b, alpha) of the saturating law to seed-resampled curves."""
    rng = np.random.default_rng(seed)
    y = _resampled_means(points, draws, rng)[:, None, :]  # (B, 1, m)
    weight = 1.0 / points.sigma**2  # (m,)
    x = (points.samples[None, :] / S_REF) ** (-ALPHAS[:, None])  # (G, m)
    a, b = _bounded_linear(y, x, weight)  # (B, G)
    loss = (((a[..., None] - b[..., None] * x) - y) ** 2 * weight).sum(-1)  # (B, G)
    best = np.clip(loss.argmin(axis=1), 1, len(ALPHAS) - 2)
    rows = np.arange(draws)
    # One parabolic step in log alpha through the best grid point and its neighbours.
    l0, l1, l2 = loss[rows, best - 1], loss[rows, best], loss[rows, best + 1]
    curvature = l0 - 2 * l1 + l2
    shift = np.where(curvature > 0, 0.5 * (l0 - l2) / np.where(curvature > 0, curvature, 1.0), 0.0)
    step = np.log(ALPHAS[1] / ALPHAS[0])
    alpha = np.clip(ALPHAS[best] * np.exp(np.clip(shift, -1, 1) * step), ALPHAS[0], ALPHAS[-1])
    x_best = (points.samples[None, :] / S_REF) ** (-alpha[:, None])  # (B, m)
    a_best, b_best = _bounded_linear(y[:, 0, :], x_best, weight)
    return np.column_stack([a_best, b_best, alpha])


def bootstrap_band(
    refits: np.ndarray, samples: float, sigma_seed: float, seeds: int, level: float = 0.95, seed: int = 0
) -> tuple[tuple[float, float], tuple[float, float]]:
    """(CI, PI) at S from the refits' percentiles; the PI adds the noise of a `seeds`-seed mean."""
    rng = np.random.default_rng(seed)
    predictions = saturating(samples, refits[:, 0], refits[:, 1], refits[:, 2])
    noisy = predictions + rng.normal(0, sigma_seed / np.sqrt(seeds), predictions.shape)
    tails = [50 * (1 - level), 100 - 50 * (1 - level)]
    ci, pi = np.percentile(predictions, tails), np.percentile(noisy, tails)
    return (float(ci[0]), float(ci[1])), (float(pi[0]), float(pi[1]))


def bootstrap_gap(
    points_a: CurvePoints, points_b: CurvePoints, samples_b: float, draws: int = 1000, level: float = 0.95
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
    low, high = np.percentile(ratios, [50 * (1 - level), 100 - 50 * (1 - level)])
    return (float(low), float(high)), float(1 - reachable.mean())
