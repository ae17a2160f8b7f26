"""Ground truth for the fitting math: curves simulated from known laws with seed noise."""

import numpy as np

from fits.fit import curve_points, fit_curve
from fits.laws import saturating

SIZES = 145e3 * 2.0 ** np.arange(10)  # 145K .. 74M
TRUTH = {"a_inf": 0.2, "b": 0.05, "alpha": 0.3}
SIGMA = 0.005


def simulate(rng, law=saturating, truth=TRUTH, sizes=SIZES, seeds=3, sigma=SIGMA):
    samples = np.repeat(sizes, seeds)
    return samples, law(samples, **truth) + rng.normal(0, sigma, samples.size)


def planted_pair(rng, ratio=42.0):
    """B is A slowed down by `ratio` samples: f_B(S) = f_A(S / ratio)."""
    truth_b = dict(TRUTH, b=TRUTH["b"] * ratio ** TRUTH["alpha"])
    a = curve_points(*simulate(rng))
    b = curve_points(*simulate(rng, truth=truth_b))
    return fit_curve(a, "saturating"), fit_curve(b, "saturating")
