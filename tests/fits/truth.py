"""Ground truth for the fitting math: the planted world of `fits.planted.procedure` with one fixed law."""

import numpy as np

from fits.curve.ensemble import Ensemble, build_ensemble
from fits.curve.fit import CurvePoints, fit_laws, law_weights
from fits.planted.procedure import SIGMA, SIZES, simulate

__all__ = ["SIGMA", "SIZES", "TRUTH", "ensemble_of", "planted_pair", "simulate_fixed"]

TRUTH = {"a_inf": 0.2, "b": 0.05, "alpha": 0.3}


def simulate_fixed(rng: np.random.Generator, truth=TRUTH, sizes=SIZES, **kwargs) -> CurvePoints:
    return simulate(rng, truth, sizes, **kwargs)


def ensemble_of(points: CurvePoints) -> Ensemble:
    """The law mixture `orch fit` would build for these points."""
    fits = fit_laws(points)
    return build_ensemble(points, fits, law_weights(fits), (0.0, 1.0))


def planted_pair(rng: np.random.Generator, ratio: float = 42.0, sizes=SIZES) -> tuple[Ensemble, Ensemble]:
    """B is A slowed down by `ratio` samples: f_B(S) = f_A(S / ratio)."""
    slowed = dict(TRUTH, b=TRUTH["b"] * ratio ** TRUTH["alpha"])
    return ensemble_of(simulate_fixed(rng, sizes=sizes)), ensemble_of(
        simulate_fixed(rng, slowed, sizes=sizes)
    )
