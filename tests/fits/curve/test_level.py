"""The one level: its z, its tails and its quantiles agree with each other."""

import pytest
from scipy import stats

from fits.curve.level import LEVEL, Z, quantile, tails


def test_z_is_the_two_sided_normal_quantile_at_the_level():
    assert stats.norm.cdf(Z) - stats.norm.cdf(-Z) == pytest.approx(LEVEL)
    assert quantile() == pytest.approx(Z)


def test_tails_and_student_quantiles_follow_the_level():
    assert tails() == pytest.approx((2.5, 97.5))
    assert tails(0.9) == pytest.approx((5.0, 95.0))
    assert quantile(LEVEL, dof=4) == pytest.approx(stats.t.ppf(0.975, 4))
    assert quantile(LEVEL, dof=4) > quantile(LEVEL, dof=40) > Z
