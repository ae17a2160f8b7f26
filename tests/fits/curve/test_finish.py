"""lmfit in the fit: its finish of the batched grid's best start agrees with the batched solver,
and its profile-likelihood intervals bracket the fitted values."""

import numpy as np
import pytest

from fits.curve.finish import finish, profile
from fits.curve.fit import fit_curve, point_weights
from fits.curve.laws import LAWS
from tests.fits.truth import simulate_fixed


@pytest.mark.parametrize("law", list(LAWS))
def test_lmfit_and_the_batched_solver_agree_on_chi_square_and_parameters(law):
    points = simulate_fixed(np.random.default_rng(4))
    fit = fit_curve(points, law)
    result = fit.model_result
    assert result is not None and list(result.params) == list(LAWS[law].params)
    assert result.chisqr == pytest.approx(fit.chi_square, rel=1e-6)
    for name, value in fit.values.items():
        assert result.params[name].value == pytest.approx(value, abs=max(1e-3 * fit.errors[name], 1e-9))


def test_lmfit_from_a_poor_start_reaches_the_batched_optimum():
    points = simulate_fixed(np.random.default_rng(5))
    law = LAWS["saturating"]
    fit = fit_curve(points, law)
    bounds = fit.bounds
    lower, upper = (np.array([bounds[n][i] for n in law.params]) for i in (0, 1))
    poor = np.array([fit.values["a_inf"] * 1.3, fit.values["b"] * 0.5, 0.9])
    weight = point_weights(points)
    result = finish(law.function, law.params, points.samples, points.mean, weight, poor, lower, upper)
    assert result.chisqr == pytest.approx(fit.chi_square, rel=1e-4)


def test_profile_intervals_bracket_the_value_and_name_what_they_could_not_find():
    fit = fit_curve(simulate_fixed(np.random.default_rng(6)), "saturating")
    found = profile(fit.model_result, ("a_inf", "alpha"))
    for name, (low, high) in found.items():
        assert low < fit.values[name] < high
    assert isinstance(profile(fit.model_result, ("no_such",))["no_such"], str)
