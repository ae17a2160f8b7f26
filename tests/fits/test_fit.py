"""Fitting one curve: parameters recovered, lack of fit, flags, the law chosen by backtest."""

import numpy as np
import pytest

from fits.fit import FitError, curve_points, fit_curve, lack_of_fit, select_law
from fits.laws import logistic, saturating
from tests.fits.truth import SIGMA, SIZES, TRUTH, simulate


def test_saturating_parameters_are_recovered():
    rng = np.random.default_rng(1)
    points = curve_points(*simulate(rng))
    fit = fit_curve(points, "saturating")
    assert fit.success and not [f for f in fit.flags if f.startswith("BOUND_HIT")]
    for name, truth in TRUTH.items():
        assert abs(fit.values[name] - truth) < 3 * fit.errors[name], name
    assert points.sigma_seed == pytest.approx(SIGMA, rel=0.4)


def test_lack_of_fit_rejects_a_true_law_about_five_percent_of_the_time():
    rng = np.random.default_rng(11)
    p_values = [fit_curve(curve_points(*simulate(rng)), "saturating").lof_p for _ in range(200)]
    assert 0.01 <= np.mean(np.array(p_values) < 0.05) <= 0.11


def test_inputs_are_copied_and_nan_raises():
    rng = np.random.default_rng(2)
    samples, values = simulate(rng)
    kept = values.copy()
    fit_curve(curve_points(samples, values), "saturating")
    np.testing.assert_array_equal(values, kept)
    values[3] = np.nan
    with pytest.raises(FitError, match="NaN"):
        curve_points(samples, values)
    assert len(curve_points(samples, values, allow_nan=True).samples) == 10


def test_flags_for_a_single_point_and_a_bound():
    single = curve_points([1e6, 1e6, 1e6], [0.1, 0.11, 0.09])
    with pytest.raises(FitError, match="parameters"):
        fit_curve(single, "saturating")
    rng = np.random.default_rng(3)
    flat = curve_points(*simulate(rng, truth={"a_inf": 0.2, "b": 0.0, "alpha": 0.3}))
    assert any(flag.startswith("BOUND_HIT") for flag in fit_curve(flat, "saturating").flags)


def test_a_logistic_truth_is_not_silently_fitted_with_the_default_law():
    rng = np.random.default_rng(10)
    truth = {"lo": 0.03, "hi": 0.15, "log10_mid": 6.2, "width": 0.25}
    points = curve_points(*simulate(rng, law=logistic, truth=truth))
    default = fit_curve(points, "saturating")
    chosen, table = select_law(points)
    assert "LOF_REJECT" in default.flags
    assert chosen.law == "logistic"
    assert table["logistic"]["backtest"] < table["saturating"]["backtest"]


def test_lack_of_fit_needs_replicates():
    points = curve_points(SIZES, saturating(SIZES, **TRUTH))
    fit = fit_curve(points, "saturating")
    assert lack_of_fit(points, fit) is None
