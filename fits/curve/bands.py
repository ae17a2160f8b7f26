"""Forecasts with confidence and prediction bands read off a curve's law mixture (`Ensemble`),
and held-out cells scored against them.

CI (mean curve): the mixture's percentiles at S.
PI (a new k-seed mean): the same draws plus the noise of a k-seed mean, sigma_seed / sqrt(k)
times Student's t at the seed-noise degrees of freedom. Both stay inside the metric's range.
"""

from dataclasses import dataclass, field

import numpy as np

from fits.curve.ensemble import Ensemble
from fits.curve.laws import LAWS
from fits.curve.level import LEVEL, tails

__all__ = ["NEAR_ASYMPTOTE", "Forecast", "covered", "forecast", "intervals", "score_holdout"]

NEAR_ASYMPTOTE = 0.9  # a prediction within 10% of (ceiling - lowest fitted level) of the ceiling


@dataclass(frozen=True)
class Forecast:
    samples: float
    seeds: int
    prediction: float
    ci: tuple[float, float]
    pi: tuple[float, float]
    sigma_mean: float  # sd of the mixture's mean curve at S
    sigma_pred: float  # sd of a k-seed mean at S: sqrt(sigma_mean^2 + sigma_seed^2 / k)
    extrapolation: float  # S / largest fitted S (1 inside the range)
    flags: tuple[str, ...]
    weights: dict[str, float] = field(default_factory=dict)  # the laws behind this forecast
    withheld: bool = False  # only unbounded laws reach this far: no headline number

    def as_dict(self) -> dict:
        """The keys `orch fit --json` shows for a forecast (a withheld prediction is null)."""
        return {
            "samples": self.samples,
            "seeds": self.seeds,
            "prediction": None if self.withheld else self.prediction,
            "ci": self.ci,
            "pi": self.pi,
            "extrapolation": self.extrapolation,
            "weights": self.weights,
            "flags": list(self.flags),
        }


def intervals(
    curves: np.ndarray, sigma_seed: float, dof: int, seeds: int, span, level: float = LEVEL
) -> tuple[tuple[float, float], tuple[float, float]]:
    """(CI, PI) from (D,) draws of the mean curve at one point: the CI their percentiles, the PI
    theirs after adding the noise of a `seeds`-seed mean (Student's t at `dof`), both in `span`."""
    rng = np.random.default_rng(0)
    t = rng.standard_t(dof, curves.shape) if dof > 0 else rng.standard_normal(curves.shape)
    noisy = np.clip(curves + sigma_seed / np.sqrt(seeds) * t, *span)
    ci, pi = np.percentile(curves, tails(level)), np.percentile(noisy, tails(level))
    return (float(ci[0]), float(ci[1])), (float(pi[0]), float(pi[1]))


def forecast(ensemble: Ensemble, samples: float, seeds: int = 3, level: float = LEVEL) -> Forecast:
    """The mixture's mean at S with a CI, and a PI for the mean of `seeds` new seeds."""
    curves = ensemble.curve_draws([samples], forecast=True)[:, 0]
    ci, pi = intervals(curves, ensemble.sigma_seed, ensemble.dof, seeds, ensemble.span, level)
    prediction = float(ensemble.predict(samples, forecast=True))
    sigma_mean = float(curves.std())
    low, high = ensemble.samples_range
    extrapolation = (
        float(samples / high) if samples > high else float(low / samples) if samples < low else 1.0
    )
    flags = []
    if extrapolation > 1:
        flags.append(f"EXTRAPOLATED:{extrapolation:.3g}x")
    withheld = ensemble.withheld(samples)
    if withheld:
        flags.append("UNBOUNDED_LAW")
    unbounded = ensemble.unbounded_share()
    if samples > high and unbounded >= 0.01:
        flags.append(f"UNBOUNDED_SLOWED:{unbounded:.0%}")
    if ensemble.method != "parametric":
        flags.append(ensemble.method.upper())
    heaviest = ensemble.heaviest
    level = LAWS[heaviest.law].ceiling
    ceiling = level(heaviest.values) if level else None
    floor = float(heaviest.predict(low))
    if ceiling is not None and ceiling > floor and (prediction - floor) / (ceiling - floor) > NEAR_ASYMPTOTE:
        flags.append("NEAR_ASYMPTOTE")
    return Forecast(
        samples=float(samples),
        seeds=seeds,
        prediction=prediction,
        ci=ci,
        pi=pi,
        sigma_mean=sigma_mean,
        sigma_pred=float(np.sqrt(sigma_mean**2 + ensemble.sigma_seed**2 / seeds)),
        extrapolation=extrapolation,
        flags=tuple(flags),
        weights=ensemble.weights,
        withheld=withheld,
    )


def score_holdout(prediction: Forecast, observed_mean: float) -> float:
    """z = (observed mean - prediction) / sigma_pred, the held-out cell's distance in the units
    of its own prediction spread (which holds the k-seed term)."""
    if prediction.sigma_pred <= 0:
        return float("inf") if observed_mean != prediction.prediction else 0.0
    return float((observed_mean - prediction.prediction) / prediction.sigma_pred)


def covered(prediction: Forecast, observed_mean: float) -> bool:
    """Whether a measured k-seed mean falls inside the forecast's PI."""
    return prediction.pi[0] <= observed_mean <= prediction.pi[1]
