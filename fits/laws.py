"""Functional forms of alignment a(S) against samples seen S. Plain functions whose signatures
name their parameters (lmfit reads them), each with a starting guess and default bounds.

Small runs start with a take-off: flat near the random-init level, then a rise. `logistic`
(in log S) and `broken` cover it; `saturating` and `power` only describe the rise itself, so the
backtest in `fits.fit` chooses between them and a fit never spans a take-off silently.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ALPHA_RANGE",
    "LAWS",
    "S_REF",
    "Law",
    "broken",
    "logistic",
    "power",
    "saturating",
    "variable_projection",
]

S_REF = 1e6  # samples; a fixed scale so that b and a are alignment units, never a free parameter
ALPHA_RANGE = (0.01, 2.0)  # the exponent of `saturating` and `power`
ALPHA_GRID = np.geomspace(*ALPHA_RANGE, 241)  # where variable projection looks for alpha


def saturating(S, a_inf, b, alpha):
    """a(S) = a_inf - b (S / S_REF)^-alpha: the default law (as in Hoffmann et al. 2022, eq. 2)."""
    return a_inf - b * (np.asarray(S, dtype=float) / S_REF) ** (-alpha)


def power(S, a, alpha):
    """a(S) = a (S / S_REF)^alpha: a pure power law, no ceiling."""
    return a * (np.asarray(S, dtype=float) / S_REF) ** alpha


def logistic(S, lo, hi, log10_mid, width):
    """A sigmoid in log10 S from `lo` (random-init level) to `hi`, centred at 10^log10_mid."""
    x = (np.log10(np.asarray(S, dtype=float)) - log10_mid) / width
    return lo + (hi - lo) / (1 + np.exp(-np.clip(x, -50, 50)))


def broken(S, a, alpha1, alpha2, log10_break):
    """Two power laws joined at S_break (continuous), slopes alpha1 below and alpha2 above."""
    x = np.log10(np.asarray(S, dtype=float) / S_REF)
    xb = log10_break - np.log10(S_REF)
    return a * 10 ** np.where(x < xb, alpha1 * (x - xb), alpha2 * (x - xb))


@dataclass(frozen=True)
class Law:
    name: str
    function: Callable[..., np.ndarray]
    guess: Callable[[np.ndarray, np.ndarray], dict[str, float]]
    bounds: Callable[[np.ndarray, np.ndarray], dict[str, tuple[float, float]]]
    takeoff: bool  # whether the form can describe a flat start

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(self.function.__code__.co_varnames[1 : self.function.__code__.co_argcount])


def _saturating_bounds(S: np.ndarray, y: np.ndarray) -> dict[str, tuple[float, float]]:
    # a_inf between the highest observed mean and 1; b >= 0; alpha in ALPHA_RANGE
    return {"a_inf": (float(np.max(y)), 1.0), "b": (0.0, np.inf), "alpha": ALPHA_RANGE}


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


def variable_projection(S: np.ndarray, y: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """(B, 3) saturating fits (a_inf, b, alpha) of B curves y (B, m) at samples S (m,).

    For each alpha on ALPHA_GRID, a_inf and b in closed form (weighted, within their bounds);
    then one parabolic step in log alpha through the best grid point and its neighbours.
    Vectorised over curves: the seed bootstrap refits a thousand at once.
    """
    y = np.atleast_2d(y)[:, None, :]  # (B, 1, m)
    x = (S[None, :] / S_REF) ** (-ALPHA_GRID[:, None])  # (G, m)
    a, b = _bounded_linear(y, x, weight)  # (B, G)
    loss = (((a[..., None] - b[..., None] * x) - y) ** 2 * weight).sum(-1)  # (B, G)
    best = np.clip(loss.argmin(axis=1), 1, len(ALPHA_GRID) - 2)
    rows = np.arange(len(best))
    l0, l1, l2 = loss[rows, best - 1], loss[rows, best], loss[rows, best + 1]
    curvature = l0 - 2 * l1 + l2
    shift = np.where(curvature > 0, 0.5 * (l0 - l2) / np.where(curvature > 0, curvature, 1.0), 0.0)
    step = np.log(ALPHA_GRID[1] / ALPHA_GRID[0])
    alpha = np.clip(ALPHA_GRID[best] * np.exp(np.clip(shift, -1, 1) * step), *ALPHA_RANGE)
    x_best = (S[None, :] / S_REF) ** (-alpha[:, None])  # (B, m)
    a_best, b_best = _bounded_linear(y[:, 0, :], x_best, weight)
    return np.column_stack([a_best, b_best, alpha])


def _saturating_guess(S: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """The unweighted variable-projection fit."""
    a_inf, b, alpha = variable_projection(S, y, np.ones_like(y))[0]
    return {"a_inf": float(a_inf), "b": float(b), "alpha": float(alpha)}


def _power_guess(S: np.ndarray, y: np.ndarray) -> dict[str, float]:
    positive = np.maximum(y, 1e-6)
    slope, intercept = np.polyfit(np.log(S / S_REF), np.log(positive), 1)
    return {"a": float(np.exp(intercept)), "alpha": float(np.clip(slope, *ALPHA_RANGE))}


def _logistic_guess(S: np.ndarray, y: np.ndarray) -> dict[str, float]:
    logs = np.log10(S)
    return {
        "lo": float(np.min(y)),
        "hi": float(np.max(y)),
        "log10_mid": float(np.median(logs)),
        "width": float(max((logs.max() - logs.min()) / 4, 0.1)),
    }


def _logistic_bounds(S: np.ndarray, y: np.ndarray) -> dict[str, tuple[float, float]]:
    logs = np.log10(S)
    return {
        "lo": (-1.0, float(np.max(y))),
        "hi": (float(np.min(y)), 1.0),
        "log10_mid": (float(logs.min()) - 2, float(logs.max()) + 2),
        "width": (0.02, 5.0),
    }


def _broken_guess(S: np.ndarray, y: np.ndarray) -> dict[str, float]:
    base = _power_guess(S, y)
    return {
        "a": base["a"],
        "alpha1": base["alpha"],
        "alpha2": base["alpha"],
        "log10_break": float(np.median(np.log10(S))),
    }


def _broken_bounds(S: np.ndarray, y: np.ndarray) -> dict[str, tuple[float, float]]:
    logs = np.log10(S)
    return {
        "a": (1e-6, 1.0),
        "alpha1": (0.0, 2.0),
        "alpha2": (0.0, 2.0),
        "log10_break": (float(logs.min()), float(logs.max())),
    }


LAWS: dict[str, Law] = {
    "saturating": Law("saturating", saturating, _saturating_guess, _saturating_bounds, takeoff=False),
    "power": Law(
        "power", power, _power_guess, lambda S, y: {"a": (1e-9, 1.0), "alpha": ALPHA_RANGE}, takeoff=False
    ),
    "logistic": Law("logistic", logistic, _logistic_guess, _logistic_bounds, takeoff=True),
    "broken": Law("broken", broken, _broken_guess, _broken_bounds, takeoff=True),
}
