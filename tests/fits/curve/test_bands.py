"""Forecasts from the law mixture: extrapolation flags, the range, withheld headlines, coverage."""

import numpy as np
import pytest

from fits.curve.bands import covered, forecast, score_holdout
from fits.curve.ensemble import build_ensemble
from fits.curve.fit import fit_laws, law_weights
from fits.curve.laws import saturating
from fits.planted.procedure import SIGMA, draw_truth, forecast_check, simulate
from tests.fits.truth import SIZES, TRUTH, ensemble_of, simulate_fixed


def test_forecast_flags_extrapolation_and_scores_holdout():
    ensemble = ensemble_of(simulate_fixed(np.random.default_rng(4), sizes=SIZES[:7]))
    ahead = forecast(ensemble, SIZES[6] * 12)
    assert ahead.extrapolation == pytest.approx(12) and "EXTRAPOLATED:12x" in ahead.flags
    assert ahead.pi[0] < ahead.ci[0] < ahead.prediction < ahead.ci[1] < ahead.pi[1]
    observed = saturating(SIZES[6] * 12, **TRUTH)
    assert abs(score_holdout(ahead, observed)) < 3 and covered(ahead, observed)
    assert sum(ahead.weights.values()) == pytest.approx(1)


def test_bands_never_leave_the_metric_range():
    points = simulate_fixed(np.random.default_rng(5), {"a_inf": 0.99, "b": 0.6, "alpha": 0.5})
    far = forecast(ensemble_of(points), 1e12)
    assert 0.0 <= far.pi[0] <= far.ci[0] <= far.ci[1] <= far.pi[1] <= 1.0


def test_a_forecast_only_an_unbounded_law_reaches_is_withheld():
    ensemble = ensemble_of(simulate_fixed(np.random.default_rng(6), sizes=SIZES[:3]))
    assert ensemble.weights["power"] == 1.0  # three points: only the two-parameter law has a weight
    near, far = forecast(ensemble, SIZES[2] * 2), forecast(ensemble, SIZES[2] * 4)
    assert not near.withheld and "UNBOUNDED_LAW" not in near.flags
    assert far.withheld and "UNBOUNDED_LAW" in far.flags and far.as_dict()["prediction"] is None


def rises_without_steps(values: np.ndarray) -> bool:
    """Whether a dense walk of forecasts never falls, and no step between neighbours is more
    than 3 times both of its neighbours' (a smooth curve's steps change slowly)."""
    steps = np.diff(values)
    if steps.min() < -1e-12:
        return False
    inner = steps[1:-1]
    jumps = inner > 3 * np.maximum(steps[:-2], steps[2:]) + 1e-7
    return not jumps.any()


@pytest.mark.parametrize("truth", [TRUTH, {"a_inf": 0.6, "b": 0.5, "alpha": 0.1}])
def test_forecasts_past_the_data_never_fall_or_step_where_every_law_rises(truth):
    """A dense walk from the largest fitted size to 10^4 times it, with the mixture's own
    weights and with half the weight on the power law (the law the old cut at 2x dropped)."""
    points = simulate_fixed(np.random.default_rng(3), truth)
    fits = fit_laws(points)
    walk = np.geomspace(SIZES[-1], SIZES[-1] * 1e4, 300)
    for weights in (law_weights(fits), dict.fromkeys(fits, 0.0) | {"power": 0.5, "saturating": 0.5}):
        ensemble = build_ensemble(points, fits, weights, (0.0, 1.0))
        predictions = np.array([forecast(ensemble, s).prediction for s in walk])
        assert rises_without_steps(predictions), (weights, predictions)


def test_the_step_check_finds_a_step_and_a_fall():
    smooth = np.log(np.geomspace(1, 100, 50))
    stepped = smooth + np.where(np.arange(50) >= 25, 0.3, 0.0)
    assert rises_without_steps(smooth)
    assert not rises_without_steps(stepped) and not rises_without_steps(smooth[::-1])


def test_prediction_bands_cover_in_a_quick_check():
    # The fast suite's version of the slow 400-replicate check in test_planted.
    check = forecast_check(30, seed=7)
    assert all(share >= 0.85 for share in check.coverage.values()), check


def test_one_seed_per_size_gives_pis_that_hold_new_means():
    """With no replicate the noise comes from the residuals; the assumed 1e-3 held 35% at 95%."""
    rng = np.random.default_rng(8)
    held = []
    for _ in range(40):
        truth = draw_truth(rng)
        target = SIZES[-1] * 4
        ahead = forecast(ensemble_of(simulate(rng, truth, seeds=1)), target, 3)
        held.append(covered(ahead, saturating(target, **truth) + rng.normal(0, SIGMA, 3).mean()))
    assert np.mean(held) >= 0.75, np.mean(held)
