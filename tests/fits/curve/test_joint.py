"""The joint law a(N, S): fitted on the smaller models, forecasting the largest."""

import numpy as np
import pytest

from fits.curve.fit import FitError, curve_points
from fits.curve.joint import fit_joint
from fits.curve.laws import joint
from fits.planted.procedure import JOINT_TRUTH, MODELS, SIGMA, joint_check
from tests.fits.truth import SIZES


def ladder(rng: np.random.Generator, models=MODELS) -> list:
    curves = []
    for n in models:
        samples = np.repeat(SIZES, 3)
        where = np.column_stack([np.full(samples.size, n), samples])
        curves.append(
            (n, curve_points(samples, joint(where, **JOINT_TRUTH) + rng.normal(0, SIGMA, samples.size)))
        )
    return curves


def test_the_largest_model_is_held_out_and_forecast_point_by_point():
    fit = fit_joint(ladder(np.random.default_rng(1)), (0.0, 1.0))
    assert fit.held_out_size == MODELS[-1] and fit.fitted_sizes == MODELS[:-1]
    assert len(fit.cells) == len(SIZES) and sum(c.covered for c in fit.cells) >= 8
    for name, truth in JOINT_TRUTH.items():
        assert abs(fit.values[name] - truth) < 4 * fit.errors[name], name


def test_two_model_sizes_are_not_enough():
    with pytest.raises(FitError, match="3 model sizes"):
        fit_joint(ladder(np.random.default_rng(2), MODELS[:2]), (0.0, 1.0))


def test_joint_coverage_in_a_quick_check():
    # The fast suite's version of the slow 400-replicate check in test_planted.
    assert joint_check(20, seed=3) >= 0.8
