"""Laws: named parameters, one alpha range, and the one variable projection."""

import numpy as np
import pytest

from fits.laws import ALPHA_RANGE, LAWS, saturating, variable_projection
from tests.fits.truth import SIZES, TRUTH


def test_laws_name_their_parameters():
    assert LAWS["saturating"].params == ("a_inf", "b", "alpha")
    assert LAWS["logistic"].params == ("lo", "hi", "log10_mid", "width")


def test_variable_projection_recovers_a_noise_free_law_for_many_curves_at_once():
    curves = np.stack([saturating(SIZES, **TRUTH), saturating(SIZES, **dict(TRUTH, alpha=0.6))])
    fitted = variable_projection(SIZES, curves, np.ones(len(SIZES)))
    assert fitted.shape == (2, 3)
    assert fitted[0] == pytest.approx([TRUTH["a_inf"], TRUTH["b"], TRUTH["alpha"]], rel=2e-3)
    assert fitted[1, 2] == pytest.approx(0.6, rel=2e-3)


def test_every_exponent_bound_is_the_one_alpha_range():
    y = saturating(SIZES, **TRUTH)
    assert LAWS["saturating"].bounds(SIZES, y)["alpha"] == ALPHA_RANGE
    assert LAWS["power"].bounds(SIZES, y)["alpha"] == ALPHA_RANGE
    flat = variable_projection(SIZES, np.full(len(SIZES), 0.1), np.ones(len(SIZES)))[0]
    assert ALPHA_RANGE[0] <= flat[2] <= ALPHA_RANGE[1]
