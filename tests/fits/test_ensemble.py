"""The law mixture: weights, draws inside the metric's range, and no unbounded law far out."""

import numpy as np
import pytest

from fits.ensemble import UNBOUNDED_REACH, build_ensemble, parameter_draws
from fits.fit import fit_curve, fit_laws, law_weights
from tests.fits.truth import SIZES, ensemble_of, simulate_fixed


def test_the_mixture_keeps_every_weighted_law_and_their_weights_sum_to_one():
    ensemble = ensemble_of(simulate_fixed(np.random.default_rng(1)))
    assert sum(ensemble.weights.values()) == pytest.approx(1)
    assert ensemble.heaviest.law == "saturating" and ensemble.method == "parametric"


def test_curve_draws_stay_inside_the_metric_range():
    points = simulate_fixed(np.random.default_rng(2), {"a_inf": 0.98, "b": 0.5, "alpha": 0.4})
    fits = fit_laws(points)
    ensemble = build_ensemble(points, fits, law_weights(fits), (0.0, 1.0))
    curves = ensemble.curve_draws(np.geomspace(1.0, 1e12, 50))
    assert curves.min() >= 0.0 and curves.max() <= 1.0


def test_unbounded_laws_drop_out_past_their_reach():
    points = simulate_fixed(np.random.default_rng(3))
    fits = fit_laws(points)
    weights = dict.fromkeys(fits, 0.0) | {"power": 0.5, "saturating": 0.5}
    ensemble = build_ensemble(points, fits, weights, (0.0, 1.0))
    near, _ = ensemble.usable(SIZES[-1] * UNBOUNDED_REACH)
    far, only_unbounded = ensemble.usable(SIZES[-1] * UNBOUNDED_REACH * 1.01)
    assert {m.fit.law for m in near} == {"power", "saturating"}
    assert {m.fit.law for m in far} == {"saturating"} and not only_unbounded


def test_parameter_draws_follow_the_covariance_and_respect_bounds():
    fit = fit_curve(simulate_fixed(np.random.default_rng(4)), "saturating")
    draws = parameter_draws(fit.values, fit.covariance, fit.bounds, dof=0, count=20000)
    np.testing.assert_allclose(draws.std(axis=0), list(fit.errors.values()), rtol=0.1)
    assert (draws[:, 2] >= fit.bounds["alpha"][0]).all()
