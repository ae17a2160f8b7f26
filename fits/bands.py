"""Confidence and prediction bands by the delta method, computed here rather than by lmfit (whose
`dely_predicted` is wrong for weighted fits), and forecasts scored against what was measured.

CI (mean curve): f(S) +- q sqrt(g' C g), g = df/dtheta at S, C the fit's covariance.
PI (a new k-seed mean): f(S) +- q sqrt(g' C g + sigma_seed^2 / k).
q is Student's t at the seed-noise degrees of freedom (normal when those are unknown).
"""

from dataclasses import asdict, dataclass

import numpy as np

from fits.fit import NEAR_ASYMPTOTE, CurvePoints, FitResult
from fits.laws import LAWS
from fits.level import LEVEL, Z, quantile

__all__ = ["Forecast", "forecast", "gradient", "score_holdout", "within_noise"]


def gradient(fit: FitResult, samples: np.ndarray) -> np.ndarray:
    """(n, p) derivatives of the fitted law with respect to its parameters (central differences)."""
    function = LAWS[fit.law].function
    samples = np.atleast_1d(np.asarray(samples, dtype=float))
    columns = []
    for name in fit.params:
        step = 1e-6 * max(abs(fit.values[name]), 1e-3)
        up = dict(fit.values, **{name: fit.values[name] + step})
        down = dict(fit.values, **{name: fit.values[name] - step})
        columns.append((function(samples, **up) - function(samples, **down)) / (2 * step))
    return np.column_stack(columns)


@dataclass(frozen=True)
class Forecast:
    samples: float
    seeds: int
    prediction: float
    ci: tuple[float, float]
    pi: tuple[float, float]
    sigma_mean: float  # sd of the fitted mean curve at S
    sigma_pred: float  # sd of a k-seed mean at S: sqrt(sigma_mean^2 + sigma_seed^2 / k)
    extrapolation: float  # S / largest fitted S (1 inside the range)
    flags: tuple[str, ...]

    def as_dict(self) -> dict:
        """The keys `orch fit --json` shows for a forecast."""
        keys = ("samples", "seeds", "prediction", "ci", "pi", "extrapolation", "flags")
        return {key: value for key, value in asdict(self).items() if key in keys}


def forecast(
    fit: FitResult, points: CurvePoints, samples: float, seeds: int = 3, level: float = LEVEL
) -> Forecast:
    """The fitted mean at S with a CI, and a PI for the mean of `seeds` new seeds."""
    g = gradient(fit, np.array([samples]))[0]
    variance = float(g @ fit.covariance @ g)
    sigma_mean = float(np.sqrt(max(variance, 0.0)))
    seed_sd = points.sigma_seed if np.isfinite(points.sigma_seed) else 0.0
    sigma_pred = float(np.sqrt(sigma_mean**2 + seed_sd**2 / seeds))
    q = quantile(level, points.pooled_df)
    prediction = float(fit.predict(samples))
    low, high = fit.samples_range
    extrapolation = (
        float(samples / high) if samples > high else float(low / samples) if samples < low else 1.0
    )
    flags = list(fit.flags)
    if extrapolation > 1:
        flags.append(f"EXTRAPOLATED:{extrapolation:.3g}x")
    if "a_inf" in fit.values:
        ceiling, floor = fit.values["a_inf"], float(points.mean.min())
        if ceiling > floor and (prediction - floor) / (ceiling - floor) > NEAR_ASYMPTOTE:
            flags.append("NEAR_ASYMPTOTE")
    return Forecast(
        samples=float(samples),
        seeds=seeds,
        prediction=prediction,
        ci=(prediction - q * sigma_mean, prediction + q * sigma_mean),
        pi=(prediction - q * sigma_pred, prediction + q * sigma_pred),
        sigma_mean=sigma_mean,
        sigma_pred=sigma_pred,
        extrapolation=extrapolation,
        flags=tuple(flags),
    )


def score_holdout(prediction: Forecast, observed_mean: float) -> float:
    """z = (observed mean - prediction) / sqrt(sigma_pred^2 + sigma_seed^2 / k); |z| <= Z is
    within seed noise (sigma_pred here already holds the k-seed term)."""
    if prediction.sigma_pred <= 0:
        return float("inf") if observed_mean != prediction.prediction else 0.0
    return float((observed_mean - prediction.prediction) / prediction.sigma_pred)


def within_noise(z: float) -> bool:
    """Whether a held-out cell's z lies inside the two-sided band at LEVEL."""
    return abs(z) <= Z
