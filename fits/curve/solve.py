"""Batched, bounded least squares: one Levenberg-Marquardt iteration runs on many problems at
once (numpy, no Python loop over problems). The same solver serves three callers:

- a grid of starts on one curve (every law is fitted from many starts and the best kept: local
  fits of saturating laws stop early, as Epoch's Chinchilla replication found);
- bootstrap refits (a thousand resampled curves at once, each started at the point fit);
- the Huber fit, by iteratively reweighted least squares on log residuals.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["HUBER_DELTA", "Solution", "huber_loss", "least_squares", "start_grid"]

# Log units. Epoch's Chinchilla replication used 1e-3 on losses; on alignment (seed noise of
# 2-4% in log units) 1e-3 is near-L1, whose fit jumps when an outlier is a support point:
# `python bench/fitting.py` measures the shift a diverged seed causes at each delta.
HUBER_DELTA = 1e-2
ITERATIONS = 200
TOLERANCE = 1e-12  # relative loss change below which a problem has converged


@dataclass(frozen=True)
class Solution:
    theta: np.ndarray  # (B, p)
    loss: np.ndarray  # (B,) weighted sum of squares, or the Huber loss
    jacobian: np.ndarray  # (B, m, p) of the weighted residuals at theta
    converged: np.ndarray  # (B,) bool


def huber_loss(residuals: np.ndarray, delta: float) -> np.ndarray:
    """Sum over the last axis of Huber's rho: r^2 / 2 inside delta, delta (|r| - delta / 2) outside."""
    size = np.abs(residuals)
    return np.where(size <= delta, 0.5 * residuals**2, delta * (size - 0.5 * delta)).sum(-1)


def _residuals(function, x, y, weight, theta, log: bool) -> np.ndarray:
    """(B, m) weighted residuals y - f (or log y - log f) of every problem at its theta."""
    predicted = function(x, *(theta[:, j : j + 1] for j in range(theta.shape[1])))
    if log:
        return (np.log(np.maximum(y, 1e-12)) - np.log(np.maximum(predicted, 1e-12))) * weight
    return (y - predicted) * weight


def _jacobian(function, x, y, weight, theta, base, lower, upper, log) -> np.ndarray:
    """(B, m, p) d residual / d theta by one-sided differences stepped away from the bounds."""
    columns = []
    for j in range(theta.shape[1]):
        step = 1e-7 * np.maximum(np.abs(theta[:, j]), 1e-3)
        step = np.where(theta[:, j] + step > upper[j], -step, step)
        moved = theta.copy()
        moved[:, j] += step
        columns.append((_residuals(function, x, y, weight, moved, log) - base) / step[:, None])
    return np.stack(columns, axis=-1)


def _objective(residuals: np.ndarray, huber: float | None) -> np.ndarray:
    return huber_loss(residuals, huber) if huber else (residuals**2).sum(-1)


def least_squares(
    function: Callable[..., np.ndarray],
    x: np.ndarray,
    y: np.ndarray,
    weight: np.ndarray,
    starts: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    huber: float | None = None,
    iterations: int = ITERATIONS,
) -> Solution:
    """Minimise sum (w (y - f(x; theta)))^2 for B problems at once, theta within [lower, upper].

    y (B, m) or (m,), weight broadcastable to it, starts (B, p). With `huber`, the loss is
    Huber's on weighted log residuals, minimised by reweighting each Levenberg-Marquardt step.
    Parameters at a bound whose step points outward are held there for that step.
    """
    theta = np.clip(np.array(starts, dtype=float), lower, upper)
    count = len(theta)
    y = np.broadcast_to(y, (count, np.shape(y)[-1]))
    weight = np.broadcast_to(weight, y.shape)
    log = bool(huber)
    residuals = _residuals(function, x, y, weight, theta, log)
    loss = _objective(residuals, huber)
    damping = np.full(count, 1e-3)
    converged = np.zeros(count, dtype=bool)
    for _ in range(iterations):
        if converged.all():
            break
        jac = _jacobian(function, x, y, weight, theta, residuals, lower, upper, log)
        step = _damped_step(jac, residuals, theta, lower, upper, damping, huber)
        trial = np.clip(theta + step, lower, upper)
        trial_residuals = _residuals(function, x, y, weight, trial, log)
        trial_loss = _objective(trial_residuals, huber)
        better = np.isfinite(trial_loss) & (trial_loss < loss) & ~converged
        change = np.abs(loss - trial_loss) <= TOLERANCE * np.maximum(loss, 1e-300)
        converged |= (better & change) | (damping > 1e12)
        theta = np.where(better[:, None], trial, theta)
        residuals = np.where(better[:, None], trial_residuals, residuals)
        loss = np.where(better, trial_loss, loss)
        damping = np.where(better, damping / 3, damping * 4)
    jac = _jacobian(function, x, y, weight, theta, residuals, lower, upper, log)
    return Solution(theta, loss, jac, converged)


def start_grid(
    guess: dict[str, float], bounds: dict[str, tuple[float, float]], limit: int = 64, seed: int = 0
) -> np.ndarray:
    """(n, p) starts: the guess first, then a seeded subset of a grid over each parameter's
    bounds (geometric over wide positive ranges; the guess x 0.3 and x 3 where unbounded)."""
    axes = []
    for name, start in guess.items():
        low, high = bounds[name]
        if not (np.isfinite(low) and np.isfinite(high)):
            axes.append(np.array([start, start * 0.3, start * 3.0]))
        elif low > 0 and high / low > 100:
            axes.append(np.geomspace(low, high, 6)[1:-1])
        else:
            axes.append(low + (high - low) * np.array([0.1, 0.4, 0.7, 0.95]))
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(axes))
    rng = np.random.default_rng(seed)
    picked = grid[rng.permutation(len(grid))[: limit - 1]]
    return np.vstack([np.array(list(guess.values()))[None, :], picked])


def _damped_step(
    jac: np.ndarray,
    residuals: np.ndarray,
    theta: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    damping: np.ndarray,
    huber: float | None,
) -> np.ndarray:
    """One Levenberg-Marquardt step per problem: Gauss-Newton on the residuals,
    (J'J + damping diag(J'J)) step = -J'r, with the parameters held at a bound whose step points
    outward left where they are; with `huber`, each residual reweighted (IRLS)."""
    if huber:  # IRLS: Huber's weight min(1, delta / |r|) on each residual
        reweight = np.sqrt(np.minimum(1.0, huber / np.maximum(np.abs(residuals), 1e-300)))
        jac, effective = jac * reweight[..., None], residuals * reweight
    else:
        effective = residuals
    normal = np.einsum("bmi,bmj->bij", jac, jac)
    gradient = np.einsum("bmi,bm->bi", jac, effective)  # half the loss gradient
    free = ~(((theta <= lower) & (gradient > 0)) | ((theta >= upper) & (gradient < 0)))
    mask = free[:, :, None] & free[:, None, :]
    system = np.where(mask, normal, 0.0) + np.eye(theta.shape[1]) * (
        damping[:, None, None] * (np.diagonal(normal, axis1=1, axis2=2)[:, :, None] + 1e-12)
        + np.where(free, 0.0, 1.0)[:, :, None]
    )
    right = np.where(free, gradient, 0.0)[..., None]
    try:
        return -np.linalg.solve(system, right)[..., 0]
    except np.linalg.LinAlgError:  # a start whose damped system is exactly singular
        return -(np.linalg.pinv(system) @ right)[..., 0]
