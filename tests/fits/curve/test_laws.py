"""Laws: named parameters, bounds inside the metric's range, and which have a ceiling."""

import numpy as np

from fits.curve.laws import ALPHA_RANGE, LAWS, joint, saturating
from tests.fits.truth import SIZES, TRUTH


def test_laws_name_their_parameters_and_say_which_have_a_ceiling():
    assert LAWS["saturating"].params == ("a_inf", "b", "alpha")
    assert LAWS["logistic"].params == ("lo", "rise", "log10_mid", "width")
    assert {name for name, law in LAWS.items() if law.ceiling} == {"saturating", "logistic"}
    assert LAWS["logistic"].ceiling({"lo": 0.02, "rise": 0.08}) == 0.1


def test_bounds_keep_every_ceiling_inside_the_metric_range():
    y = saturating(SIZES, **TRUTH)
    for span in ((0.0, 1.0), (-1.0, 1.0)):
        bounds = {name: law.bounds(SIZES, y, span) for name, law in LAWS.items()}
        assert bounds["saturating"]["a_inf"][1] == span[1]
        assert bounds["logistic"]["lo"][0] == span[0] and bounds["logistic"]["rise"] == (
            0.0,
            span[1] - span[0],
        )
    assert bounds["saturating"]["alpha"] == ALPHA_RANGE


def test_the_joint_law_reduces_to_the_saturating_law_at_one_model_size():
    where = np.column_stack([np.full(len(SIZES), 1e8), SIZES])
    values = joint(where, e=0.25, a=0.05, beta=0.3, b=TRUTH["b"], alpha=TRUTH["alpha"])
    np.testing.assert_allclose(values, saturating(SIZES, **TRUTH))
