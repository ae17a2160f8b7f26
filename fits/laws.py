"""Functional forms of alignment a(S) against samples seen S. Plain functions whose signatures
name their parameters (lmfit reads them), each with a starting guess and default bounds.

Small runs start with a take-off: flat near the random-init level, then a rise. `logistic`
(in log S) and `broken` cover it; `saturating` and `power` only describe the rise itself, so the
backtest in `fits.fit` chooses between them and a fit never spans a take-off silently.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["LAWS", "S_REF", "Law", "broken", "logistic", "power", "saturating"]

S_REF = 1e6  # samples; a fixed scale so that b and a are alignment units, never a free parameter


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
    # a_inf between the highest observed mean and 1; b >= 0; alpha in [0.01, 2]
    return {"a_inf": (float(np.max(y)), 1.0), "b": (0.0, np.inf), "alpha": (0.01, 2.0)}


def _saturating_guess(S: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Variable projection: for each alpha on a grid, a_inf and b by least squares."""
    best = (np.inf, {})
    for alpha in np.geomspace(0.01, 2.0, 60):
        x = (S / S_REF) ** (-alpha)
        design = np.column_stack([np.ones_like(x), -x])
        (a_inf, b), *_ = np.linalg.lstsq(design, y, rcond=None)
        a_inf, b = min(max(a_inf, np.max(y)), 1.0), max(b, 0.0)
        loss = float(np.sum((a_inf - b * x - y) ** 2))
        if loss < best[0]:
            best = (loss, {"a_inf": a_inf, "b": b, "alpha": float(alpha)})
    return best[1]


def _power_guess(S: np.ndarray, y: np.ndarray) -> dict[str, float]:
    positive = np.maximum(y, 1e-6)
    slope, intercept = np.polyfit(np.log(S / S_REF), np.log(positive), 1)
    return {"a": float(np.exp(intercept)), "alpha": float(np.clip(slope, 0.01, 2.0))}


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
        "power", power, _power_guess, lambda S, y: {"a": (1e-9, 1.0), "alpha": (0.01, 2.0)}, takeoff=False
    ),
    "logistic": Law("logistic", logistic, _logistic_guess, _logistic_bounds, takeoff=True),
    "broken": Law("broken", broken, _broken_guess, _broken_bounds, takeoff=True),
}
