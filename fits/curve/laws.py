"""Functional forms of alignment a(S) against samples seen S. Plain functions whose signatures
name their parameters, each with a starting guess and bounds inside the metric's range.

Small runs start with a take-off: flat near the random-init level, then a rise. `logistic`
(in log S) and `broken` cover it; `saturating` and `power` only describe the rise itself. No one
form is chosen: `fits.curve.ensemble` weighs them all. `power` and `broken` have no ceiling
(`ceiling` None): they may describe the data but never forecast far past it on their own.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ALPHA_RANGE",
    "LAWS",
    "N_REF",
    "S_REF",
    "UNIT_SPAN",
    "Law",
    "Span",
    "broken",
    "joint",
    "logistic",
    "power",
    "saturating",
]

N_REF = 1e8  # parameters, the model-size scale of the joint law
S_REF = 1e6  # samples; a fixed scale so that b and a are alignment units, never a free parameter
ALPHA_RANGE = (0.01, 2.0)  # the exponent of `saturating` and `power`

Span = tuple[float, float]  # the metric's range: every law's values stay inside it
UNIT_SPAN: Span = (0.0, 1.0)  # the range of most alignment metrics


def saturating(S, a_inf, b, alpha):
    """a(S) = a_inf - b (S / S_REF)^-alpha: the default law (as in Hoffmann et al. 2022, eq. 2)."""
    return a_inf - b * (np.asarray(S, dtype=float) / S_REF) ** (-alpha)


def power(S, a, alpha):
    """a(S) = a (S / S_REF)^alpha: a pure power law, no ceiling."""
    return a * (np.asarray(S, dtype=float) / S_REF) ** alpha


def logistic(S, lo, rise, log10_mid, width):
    """A sigmoid in log10 S from `lo` (random-init level) up to lo + rise, centred at
    10^log10_mid. `rise` >= 0: like every law here, it never falls with more samples."""
    x = (np.log10(np.asarray(S, dtype=float)) - log10_mid) / width
    return lo + rise / (1 + np.exp(-np.clip(x, -50, 50)))


def broken(S, a, alpha1, alpha2, log10_break):
    """Two power laws joined at S_break (continuous), slopes alpha1 below and alpha2 above."""
    x = np.log10(np.asarray(S, dtype=float) / S_REF)
    xb = log10_break - np.log10(S_REF)
    return a * 10 ** np.where(x < xb, alpha1 * (x - xb), alpha2 * (x - xb))


def joint(X, e, a, beta, b, alpha):
    """a(N, S) = e - a (N / N_REF)^-beta - b (S / S_REF)^-alpha over model size N (X[..., 0])
    and samples S (X[..., 1]): a ladder fit's additive form (Hoffmann et al. 2022, eq. 10)."""
    X = np.asarray(X, dtype=float)
    return e - a * (X[..., 0] / N_REF) ** (-beta) - b * (X[..., 1] / S_REF) ** (-alpha)


@dataclass(frozen=True)
class Law:
    name: str
    function: Callable[..., np.ndarray]
    guess: Callable[[np.ndarray, np.ndarray], dict[str, float]]
    bounds: Callable[[np.ndarray, np.ndarray, Span], dict[str, tuple[float, float]]]
    ceiling: Callable[[dict[str, float]], float] | None  # the level it tends to; None: no ceiling
    key_params: tuple[str, ...] = ()  # its ceiling and exponents: what `--profile` profiles

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(self.function.__code__.co_varnames[1 : self.function.__code__.co_argcount])


def _saturating_guess(S: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """A ceiling a little above the data, b and alpha from the first and last points."""
    rise = max(float(y.max() - y.min()), 1e-3)
    a_inf = float(y.max()) + 0.5 * rise
    alpha = 0.3
    b = (a_inf - float(y[0])) * (S[0] / S_REF) ** alpha
    return {"a_inf": a_inf, "b": max(b, 1e-6), "alpha": alpha}


def _saturating_bounds(S: np.ndarray, y: np.ndarray, span: Span) -> dict[str, tuple[float, float]]:
    # a_inf above the lowest mean (an increasing law's ceiling is above every point, give or
    # take noise) and inside the metric's range; b >= 0; alpha in ALPHA_RANGE
    return {"a_inf": (float(np.min(y)), span[1]), "b": (0.0, np.inf), "alpha": ALPHA_RANGE}


def _power_guess(S: np.ndarray, y: np.ndarray) -> dict[str, float]:
    positive = np.maximum(y, 1e-6)
    slope, intercept = np.polyfit(np.log(S / S_REF), np.log(positive), 1)
    return {"a": float(np.exp(intercept)), "alpha": float(np.clip(slope, *ALPHA_RANGE))}


def _power_bounds(S: np.ndarray, y: np.ndarray, span: Span) -> dict[str, tuple[float, float]]:
    return {"a": (1e-9, span[1]), "alpha": ALPHA_RANGE}


def _logistic_guess(S: np.ndarray, y: np.ndarray) -> dict[str, float]:
    logs = np.log10(S)
    return {
        "lo": float(np.min(y)),
        "rise": float(max(np.max(y) - np.min(y), 1e-6)),
        "log10_mid": float(np.median(logs)),
        "width": float(max((logs.max() - logs.min()) / 4, 0.1)),
    }


def _logistic_bounds(S: np.ndarray, y: np.ndarray, span: Span) -> dict[str, tuple[float, float]]:
    logs = np.log10(S)
    return {
        "lo": (span[0], float(np.max(y))),
        "rise": (0.0, span[1] - span[0]),
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


def _broken_bounds(S: np.ndarray, y: np.ndarray, span: Span) -> dict[str, tuple[float, float]]:
    logs = np.log10(S)
    return {
        "a": (1e-6, span[1]),
        "alpha1": (0.0, 2.0),
        "alpha2": (0.0, 2.0),
        "log10_break": (float(logs.min()), float(logs.max())),
    }


LAWS: dict[str, Law] = {
    "saturating": Law(
        "saturating",
        saturating,
        _saturating_guess,
        _saturating_bounds,
        lambda v: v["a_inf"],
        ("a_inf", "alpha"),
    ),
    "power": Law("power", power, _power_guess, _power_bounds, None, ("alpha",)),
    "logistic": Law(
        "logistic", logistic, _logistic_guess, _logistic_bounds, lambda v: v["lo"] + v["rise"], ("rise",)
    ),
    "broken": Law("broken", broken, _broken_guess, _broken_bounds, None, ("alpha1", "alpha2")),
}
