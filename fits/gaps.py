"""Sample gaps: how many fewer samples curve A needs to reach the alignment curve B reaches.

a* = B's alignment at S_B (fitted, or observed when B is a single checkpoint); N_A* solves
f_A(N) = a*; R = S_B / N_A*. The interval is the delta method on log R through the implicit
function theorem: d N*/d theta_A = -(df_A/d theta_A) / (df_A/dN), and through a* for theta_B.
"""

from dataclasses import dataclass, field

import numpy as np
from scipy import optimize

from fits.bands import gradient
from fits.fit import FitResult
from fits.level import LEVEL, quantile

__all__ = ["Gap", "invert", "sample_gap"]

SEARCH = (1.0, 1e16)  # samples: where an inverse is looked for


def invert(fit: FitResult, target: float) -> float | None:
    """The S at which the fitted law first reaches `target`, or None when it is above the target
    from the first sample on, or never reaches it, within SEARCH."""
    low, high = np.log(SEARCH[0]), np.log(SEARCH[1])

    def gap(log_s: float) -> float:
        return float(fit.predict(np.exp(log_s))) - target

    if gap(low) > 0 or gap(high) < 0:
        return None
    return float(np.exp(optimize.brentq(gap, low, high, xtol=1e-10)))


def _slope(fit: FitResult, samples: float) -> float:
    step = samples * 1e-4
    return float((fit.predict(samples + step) - fit.predict(samples - step)) / (2 * step))


@dataclass
class Gap:
    target: float
    samples_b: float
    samples_a: float | None
    ratio: float | None
    interval: tuple[float, float] | None
    flags: list[str] = field(default_factory=list)


def sample_gap(
    fit_a: FitResult,
    fit_b: FitResult | None,
    samples_b: float,
    observed_b: float | None = None,
    observed_sigma_b: float = 0.0,
    level: float = LEVEL,
) -> Gap:
    """R = S_B / N_A* with a delta-method interval on log R, and the flags that apply.

    Pass `fit_b=None` with `observed_b` (and its standard error) when B is one checkpoint.
    """
    flags: list[str] = []
    if fit_b is None:
        if observed_b is None:
            raise ValueError("give B's fit or its observed alignment")
        target, target_var = observed_b, observed_sigma_b**2
        flags.append("B_SINGLE_CHECKPOINT")
    else:
        target = float(fit_b.predict(samples_b))
        g_b = gradient(fit_b, np.array([samples_b]))[0]
        target_var = float(g_b @ fit_b.covariance @ g_b)
        if samples_b > fit_b.samples_range[1]:
            flags.append("B_EXTRAPOLATED")
    ceiling = fit_a.values.get("a_inf", fit_a.values.get("hi"))
    if ceiling is not None and target >= ceiling:
        flags.append("TARGET_AT_OR_ABOVE_A_ASYMPTOTE")
        return Gap(target, samples_b, None, None, None, flags)
    samples_a = invert(fit_a, target)
    if samples_a is None:
        above = float(fit_a.predict(SEARCH[0])) > target
        flags.append("A_ABOVE_TARGET_FROM_THE_START" if above else "A_NEVER_REACHES_TARGET")
        return Gap(target, samples_b, None, None, None, flags)
    low, high = fit_a.samples_range
    if not low <= samples_a <= high:
        flags.append("N_A_OUTSIDE_OBSERVED_RANGE")
    slope = _slope(fit_a, samples_a)
    g_a = gradient(fit_a, np.array([samples_a]))[0]
    # var(log N*) = [g_a' C_a g_a + var(a*)] / (N* slope)^2
    variance = (
        (float(g_a @ fit_a.covariance @ g_a) + target_var) / (samples_a * slope) ** 2 if slope > 0 else np.inf
    )
    ratio = samples_b / samples_a
    q = quantile(level)
    spread = q * float(np.sqrt(variance)) if np.isfinite(variance) else np.inf
    interval = (ratio * float(np.exp(-spread)), ratio * float(np.exp(spread)))
    return Gap(target, samples_b, samples_a, ratio, interval, flags)
