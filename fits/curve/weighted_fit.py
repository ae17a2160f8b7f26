"""A law's best weighted fit to arrays: least squares (or Huber's loss) from every start of a
grid (`fits.curve.solve`), finished by lmfit (`fits.curve.finish`). Pure: arrays in, an `ArrayFit` out;
`fits.curve.fit` puts curves through it, `fits.curve.joint` the joint law.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np

from fits.curve.finish import FINISH_GAIN, finish
from fits.curve.solve import least_squares, start_grid

__all__ = ["ArrayFit", "fit_arrays"]


@dataclass(frozen=True)
class ArrayFit:
    """A law's best fit to weighted means: the values, their covariance and the fit's quality."""

    values: dict[str, float]
    covariance: np.ndarray
    residuals: np.ndarray
    chi_square: float
    dof: int
    converged: bool
    starts: int
    model_result: Any = None  # lmfit's ModelResult from the best start (None for a Huber fit)
    finished: bool = False  # lmfit's finish lowered chi-square, and its values were taken

    @property
    def inflated(self) -> np.ndarray:
        """The covariance scaled by max(1, reduced chi-square): for a law the data reject."""
        return self.covariance * (max(1.0, self.chi_square / self.dof) if self.dof > 0 else 1.0)


def fit_arrays(
    function,
    names: tuple[str, ...],
    x: np.ndarray,
    mean: np.ndarray,
    weight: np.ndarray,
    guess: dict[str, float],
    bounds: dict[str, tuple[float, float]],
    replicates: tuple[np.ndarray, np.ndarray] | None = None,
    huber: float | None = None,
) -> ArrayFit:
    """Fit `function(x, *names)` to `mean` from every start of a grid, keep the best, and
    finish it with lmfit (`fits.curve.finish`), whose values are taken where they lower chi-square.

    With `huber`, the loss is Huber's on the log residuals of the `replicates` (x, y): one
    diverged seed then barely moves the fit, and lmfit (which has no such loss) does not finish
    it. The covariance is the Gauss-Newton one on the weighted means, in units of the seed noise
    (`inflated` scales it by any excess chi-square).
    """
    lower = np.array([bounds[n][0] for n in names])
    upper = np.array([bounds[n][1] for n in names])
    starts = start_grid({n: guess[n] for n in names}, bounds)
    if huber and replicates is not None:
        solution = least_squares(function, replicates[0], replicates[1], 1.0, starts, lower, upper, huber)
    else:
        solution = least_squares(function, x, mean, weight, starts, lower, upper)
    best = int(np.nanargmin(np.where(np.isfinite(solution.loss), solution.loss, np.inf)))
    theta = solution.theta[best : best + 1]
    chi_square = float(np.sum(((mean - function(x, *theta[0])) * weight) ** 2))
    result, finished = None, False
    if not huber:
        result = finish(function, names, x, mean, weight, theta[0], lower, upper)
        finished = bool(np.isfinite(result.chisqr) and result.chisqr < chi_square * (1 - FINISH_GAIN))
        if finished:
            theta = np.array([[result.params[n].value for n in names]])
    at_best = least_squares(function, x, mean, weight, theta, lower, upper, iterations=0)
    residuals = (mean - function(x, *theta[0])) * weight
    chi_square = float(np.sum(residuals**2))
    dof = len(mean) - len(names)
    jac = at_best.jacobian[0]
    covariance = np.linalg.pinv(jac.T @ jac)
    values = {n: float(v) for n, v in zip(names, theta[0], strict=True)}
    converged = bool(solution.converged[best]) or (finished and bool(result.success))
    return ArrayFit(values, covariance, residuals, chi_square, dof, converged, len(starts), result, finished)
