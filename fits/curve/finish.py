"""lmfit in the fit: each law's best start from the batched grid (`fits.curve.solve`) is finished by
lmfit's `Model`, built from the law function with the law's bounds, and the fit keeps lmfit's
`ModelResult` (named parameters, standard errors, `fit_report`). `profile` adds lmfit's
profile-likelihood intervals (`conf_interval`), which stay honest where the covariance is a poor
guide: near a bound, or on a flat direction of chi-square.

The batched solver stays for the grid of starts and for bootstraps (a thousand refits at once);
lmfit's values replace its values only where they lower chi-square by more than FINISH_GAIN.
"""

import functools
import warnings
from collections.abc import Callable

import numpy as np
from lmfit import Model, Parameters
from lmfit.model import ModelResult

from fits.curve.level import LEVEL

__all__ = ["FINISH_GAIN", "finish", "profile"]

FINISH_GAIN = 1e-6  # the share of chi-square lmfit must remove for its values to be taken


@functools.lru_cache(maxsize=16)
def _model(function: Callable[..., np.ndarray]) -> Model:
    """lmfit's Model of a law function: its first argument is the independent variable."""
    return Model(function, independent_vars=[function.__code__.co_varnames[0]])


def finish(
    function: Callable[..., np.ndarray],
    names: tuple[str, ...],
    x: np.ndarray,
    mean: np.ndarray,
    weight: np.ndarray,
    start: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
) -> ModelResult:
    """lmfit's least-squares fit of `function` to the weighted means, from `start`, inside the
    bounds: it minimises sum (weight (mean - f(x)))^2, the batched solver's chi-square."""
    model = _model(function)
    params = Parameters()
    for name, value, low, high in zip(names, start, lower, upper, strict=True):
        params.add(name, value=float(np.clip(value, low, high)), min=float(low), max=float(high))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a trial step off the curve's domain
        return model.fit(mean, params, weights=weight, **{model.independent_vars[0]: x})


def profile(result: ModelResult, names: tuple[str, ...]) -> dict[str, tuple[float, float] | str]:
    """Each parameter's profile-likelihood interval at LEVEL, or why lmfit could not give one."""
    found: dict[str, tuple[float, float] | str] = {}
    for name in names:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # lmfit warns as it walks into a bound
                table = result.conf_interval(p_names=[name], sigmas=[LEVEL])[name]
        except Exception as error:  # lmfit raises several kinds: no stderr, a profile that never rises
            found[name] = f"no interval ({type(error).__name__}: {str(error).splitlines()[0][:80]})"
            continue
        parameter = result.params[name]
        ends = np.clip([value for level, value in table if level > 0], parameter.min, parameter.max)
        found[name] = (float(ends.min()), float(ends.max()))  # a profile that runs into a bound ends there
    return found
