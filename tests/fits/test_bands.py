"""Delta-method bands: extrapolation flags, held-out z, and prediction-interval coverage."""

import numpy as np
import pytest

from fits.bands import forecast, score_holdout, within_noise
from fits.fit import curve_points, fit_curve
from fits.laws import saturating
from fits.level import Z
from tests.fits.truth import SIGMA, SIZES, TRUTH, simulate


def test_forecast_flags_extrapolation_and_scores_holdout():
    rng = np.random.default_rng(4)
    points = curve_points(*simulate(rng, sizes=SIZES[:7]))
    fit = fit_curve(points, "saturating")
    ahead = forecast(fit, points, SIZES[6] * 12)
    assert ahead.extrapolation == pytest.approx(12)
    assert "EXTRAPOLATED:12x" in ahead.flags
    assert ahead.pi[0] < ahead.ci[0] < ahead.prediction < ahead.ci[1] < ahead.pi[1]
    observed = saturating(SIZES[6] * 12, **TRUTH)
    assert abs(score_holdout(ahead, observed)) < 3


def prediction_coverage(simulations: int, factor: float, seed: int) -> float:
    rng = np.random.default_rng(seed)
    fitted = SIZES[:7]
    hits = 0
    for _ in range(simulations):
        points = curve_points(*simulate(rng, sizes=fitted))
        fit = fit_curve(points, "saturating")
        target = fitted[-1] * factor
        new_mean = saturating(target, **TRUTH) + rng.normal(0, SIGMA, 3).mean()
        band = forecast(fit, points, target, seeds=3)
        hits += band.pi[0] <= new_mean <= band.pi[1]
    return hits / simulations


@pytest.mark.slow
@pytest.mark.parametrize("factor", [4, 12])
def test_prediction_bands_cover_held_out_points(factor):
    coverage = prediction_coverage(200, factor, seed=factor)
    assert 0.90 <= coverage <= 0.99, coverage


def test_prediction_bands_cover_in_a_quick_check():
    # The fast suite's smaller version of the slow coverage test.
    assert prediction_coverage(40, 4, seed=7) >= 0.85


def test_within_noise_is_the_two_sided_band_at_the_level():
    assert within_noise(Z) and within_noise(-Z)
    assert not within_noise(Z + 1e-9)
