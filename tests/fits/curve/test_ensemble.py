"""The law mixture: weights, draws inside the metric's range, and a slowed clock for the laws
without a ceiling past the data."""

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from fits.curve.ensemble import UNBOUNDED_REACH, Ensemble, build_ensemble, parameter_draws, slowed
from fits.curve.fit import fit_curve, fit_laws, law_weights
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


def test_a_law_without_a_ceiling_is_read_on_a_clock_that_slows_and_stops_at_its_reach():
    last = SIZES[-1]
    walk = np.geomspace(last / 10, last * 1e4, 500)
    read = slowed(walk, last)
    np.testing.assert_array_equal(read[walk <= last], walk[walk <= last])  # the data: S itself
    assert np.all(np.diff(read) >= 0) and read.max() == pytest.approx(UNBOUNDED_REACH * last)
    assert read[walk >= UNBOUNDED_REACH**2 * last] == pytest.approx(UNBOUNDED_REACH * last)
    pace = np.diff(np.log(read)) / np.diff(np.log(walk))  # d ln S' / d ln S: 1, falling to 0
    assert pace[0] == pytest.approx(1) and pace[-1] == pytest.approx(0)
    assert np.abs(np.diff(pace)).max() < 0.05  # no kink where the data end or where it stops


def test_past_reach_the_unbounded_laws_hold_and_only_a_mixture_without_a_ceiling_is_withheld():
    points = simulate_fixed(np.random.default_rng(3))
    fits = fit_laws(points)
    half = build_ensemble(points, fits, dict.fromkeys(fits, 0.0) | {"power": 0.5, "saturating": 0.5}, (0, 1))
    far = SIZES[-1] * UNBOUNDED_REACH**2
    power_at_reach = fits["power"].predict(SIZES[-1] * UNBOUNDED_REACH)
    expected = 0.5 * power_at_reach + 0.5 * fits["saturating"].predict(far * 10)
    assert half.predict(far * 10, forecast=True) == pytest.approx(expected)
    assert not half.withheld(far * 10)
    alone = build_ensemble(points, fits, dict.fromkeys(fits, 0.0) | {"power": 1.0}, (0, 1))
    assert not alone.withheld(SIZES[-1] * UNBOUNDED_REACH) and alone.withheld(far)


def test_parameter_draws_follow_the_covariance_and_respect_bounds():
    fit = fit_curve(simulate_fixed(np.random.default_rng(4)), "saturating")
    draws = parameter_draws(fit.values, fit.covariance, fit.bounds, dof=0, count=20000)
    np.testing.assert_allclose(draws.std(axis=0), list(fit.errors.values()), rtol=0.1)
    assert (draws[:, 2] >= fit.bounds["alpha"][0]).all()


def test_two_curves_draws_are_independent_and_one_curves_draws_are_reproducible():
    # B is A moved up by 0.01: one covariance. With one draw seed for every curve, the two moved
    # together draw by draw (a correlation of 1), and a gap between such curves came out narrow.
    points = simulate_fixed(np.random.default_rng(5))
    moved = replace(points, mean=points.mean + 0.01, replicates=tuple(r + 0.01 for r in points.replicates))
    a, b = (saturating_alone(p) for p in (points, moved))
    at = np.array([SIZES[len(SIZES) // 2]])
    draws_a, draws_b = a.curve_draws(at)[:, 0], b.curve_draws(at)[:, 0]
    assert abs(np.corrcoef(draws_a, draws_b)[0, 1]) < 0.1  # 4000 draws: SE about 0.016
    again = saturating_alone(simulate_fixed(np.random.default_rng(5)))
    np.testing.assert_array_equal(again.curve_draws(at), a.curve_draws(at))


def test_the_t_spread_scales_each_draws_distance_from_its_law_by_the_noise_estimates_t():
    points = simulate_fixed(np.random.default_rng(6), sizes=SIZES[:5], seeds=2)  # 5 seed dof
    alone = saturating_alone(points, (-1e3, 1e3))  # a range no draw reaches: no clipping
    at = np.array([SIZES[2]])
    spread = alone.t_spread()
    point = alone.members[0].fit.predict(at)
    np.testing.assert_allclose(
        alone.curve_draws(at, spread=spread) - point, (alone.curve_draws(at) - point) * spread[:, None]
    )
    # a normal draw times the spread is Student's t on the curve's seed dof
    t = np.random.default_rng(7).standard_normal(spread.size) * spread
    assert np.percentile(np.abs(t), 95) == pytest.approx(stats.t.ppf(0.975, points.pooled_df), rel=0.05)
    assert (
        replace(alone, dof=0).t_spread() is None and replace(alone, method="bootstrap:200").t_spread() is None
    )


def saturating_alone(points, span=(0.0, 1.0)) -> Ensemble:
    """The mixture of `points` with all its weight on the saturating law."""
    fits = fit_laws(points)
    return build_ensemble(points, fits, dict.fromkeys(fits, 0.0) | {"saturating": 1.0}, span)
