"""Backtests at the ratios people extrapolate: one cell per ratio the data allow, and the table."""

import numpy as np

from fits.curve.backtest import MIN_POINTS, backtest, backtest_table
from tests.fits.truth import SIZES, simulate_fixed


def test_a_ten_size_curve_is_backtested_at_2_4_8_and_16x():
    points = simulate_fixed(np.random.default_rng(1))
    cells = backtest(points, (0.0, 1.0))
    assert [c.ratio for c in cells] == [2, 4, 8, 16]
    assert all(c.samples == SIZES[-1] and c.observed == points.mean[-1] for c in cells)
    assert sum(c.covered for c in cells) >= 3


def test_ratios_that_leave_too_few_points_are_skipped():
    points = simulate_fixed(np.random.default_rng(2), sizes=SIZES[:7])
    ratios = [c.ratio for c in backtest(points, (0.0, 1.0))]
    assert ratios == [2, 4]  # 16x and 8x would leave fewer than MIN_POINTS sizes
    assert MIN_POINTS == 5


def test_the_table_gives_error_and_coverage_per_ratio():
    rng = np.random.default_rng(3)
    cells = [cell for _ in range(4) for cell in backtest(simulate_fixed(rng), (0.0, 1.0))]
    table = backtest_table(cells)
    assert [row["ratio"] for row in table] == [2, 4, 8, 16] and all(row["curves"] == 4 for row in table)
    assert all(0 <= row["coverage"] <= 1 and row["rms_z"] > 0 for row in table)
