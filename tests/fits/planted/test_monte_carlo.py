"""A planted figure's Monte-Carlo error (`fits.planted.monte_carlo`): the bounds the slow goals
are checked on hold their stated level."""

import math

import numpy as np
import pytest

from fits.planted.monte_carlo import median, paired_difference, share


def test_a_share_of_none_or_all_has_the_exact_one_sided_bound():
    assert share(0, 60).high == pytest.approx(1 - 0.05 ** (1 / 60))  # the "rule of three" bound
    assert share(60, 60).low == pytest.approx(0.05 ** (1 / 60))
    half = share(30, 60)
    assert half.se == pytest.approx(math.sqrt(0.25 / 60)) and half.low < 0.5 < half.high
    assert math.isnan(share(0, 0).value)


def test_the_medians_bounds_miss_the_true_median_at_most_5_percent_a_side():
    """4,000 sets of 60 draws from a skewed law whose median is 1: each bound misses it at most
    5% of the time by construction (the order statistics are conservative), so the rate seen is
    at most 5% plus 4 binomial SEs (1.4 points): this cannot fail by chance."""
    rng = np.random.default_rng(0)
    draws = rng.lognormal(0.0, 1.0, (4_000, 60))
    found = [median(row) for row in draws]
    above = np.mean([e.low > 1 for e in found])
    below = np.mean([e.high < 1 for e in found])
    limit = 0.05 + 4 * math.sqrt(0.05 * 0.95 / 4_000)
    assert above <= limit and below <= limit
    assert above > 0.02 and below > 0.02  # and not far more conservative than it says


def test_an_open_interval_sorts_last_and_leaves_the_bounds_finite_where_few_are_open():
    values = np.r_[np.linspace(0.5, 1.5, 50), [np.inf] * 10]
    found = median(values)
    assert math.isfinite(found.high) and found.low < found.value < found.high


def test_a_paired_difference_has_mcnemars_se():
    found = paired_difference(15, 5, 60)
    assert found.value == pytest.approx(10 / 60)
    assert found.se == pytest.approx(math.sqrt(20 - 60 * (10 / 60) ** 2) / 60)
    assert found.low == pytest.approx(found.value - 1.6448536 * found.se)
