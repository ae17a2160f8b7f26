"""Sample gaps: a planted 42x is covered; bounds, not ratios, where a crossing is unobserved."""

from dataclasses import replace

import numpy as np
import pytest

from fits.curve.fit import curve_points
from fits.curve.gaps import crossing, sample_gap
from fits.curve.laws import saturating
from tests.fits.truth import SIZES, TRUTH, ensemble_of, planted_pair, simulate_fixed


def test_gap_interval_covers_a_planted_42x_at_a_level_both_curves_reach():
    a, b = planted_pair(np.random.default_rng(5))
    gap = sample_gap(a, b)
    assert gap.identifiable and not gap.reasons and gap.bound is None
    assert gap.interval[0] <= 42 <= gap.interval[1]
    assert gap.ratio == pytest.approx(42, rel=0.3)
    assert SIZES[0] <= gap.samples_a <= SIZES[-1] and SIZES[0] <= gap.samples_b <= SIZES[-1]


def test_a_gap_interval_widens_with_the_uncertainty_of_each_curves_seed_noise_estimate():
    # Each curve's draws become Student's t on its seed dof (`Ensemble.t_spread`): a gap has no
    # noise term of its own to carry that uncertainty.
    a, b = planted_pair(np.random.default_rng(5))
    widths = {}
    for dof in (2, 10**6):
        low, high = sample_gap(replace(a, dof=dof), replace(b, dof=dof)).interval
        widths[dof] = np.log(high / low)
    assert 1.4 < widths[2] / widths[10**6] < 2.6, widths


def test_a_faster_curve_above_the_target_from_its_first_checkpoint_gives_a_lower_bound():
    # A measured only on its last 3 sizes, B only on its first 4: A starts above B's last level.
    a, b = planted_pair(np.random.default_rng(6), ratio=2000)
    a = ensemble_of(simulate_fixed(np.random.default_rng(7), sizes=SIZES[-5:]))
    gap = sample_gap(a, b)
    assert not gap.identifiable and gap.ratio is None
    assert "A_ABOVE_TARGET_AT_FIRST_CHECKPOINT" in gap.flags
    # R >= N_B* / S_A,first, with N_B* at the low end of its draws: at most B's last size
    assert gap.bound.side == ">=" and 4 < gap.bound.ratio <= SIZES[-1] / SIZES[-5]


def test_a_target_b_never_reaches_is_not_reached_with_its_bound():
    a, b = planted_pair(np.random.default_rng(8))
    target = float(a.predict(SIZES[-3]))  # B, 42x slower, is still below it at its last size
    gap = sample_gap(a, b, target=target)
    assert "B_NOT_REACHED" in gap.flags and not gap.identifiable
    assert gap.bound.side == ">=" and any("does not reach" in reason for reason in gap.reasons)


def test_a_single_checkpoint_b_is_observed_not_fitted():
    a, _ = planted_pair(np.random.default_rng(9))
    gap = sample_gap(a, None, target=float(a.predict(2e6)), samples_b=84e6, target_sd=0.002)
    assert "B_SINGLE_CHECKPOINT" in gap.flags and gap.ratio == pytest.approx(42, rel=0.05)
    assert gap.interval[0] < gap.ratio < gap.interval[1]


def test_a_wide_or_open_interval_is_not_identifiable():
    # Five sizes with ten times the usual seed noise: the data cannot pin the ratio down.
    rng = np.random.default_rng(10)
    samples = np.repeat(SIZES[:5], 3)
    a, b = (
        ensemble_of(curve_points(samples, saturating(samples, **truth) + rng.normal(0, 0.05, samples.size)))
        for truth in (TRUTH, dict(TRUTH, b=TRUTH["b"] * 42 ** TRUTH["alpha"]))
    )
    gap = sample_gap(a, b)
    assert not gap.identifiable and {"WIDE_INTERVAL", "OPEN_INTERVAL"} & set(gap.flags)
    assert gap.reasons and gap.ratio is not None


CROSSING = {"a_inf": 0.28, "b": 0.12, "alpha": 0.35}  # B: behind A below about 1M, ahead above


def test_a_crossing_pair_is_flagged_and_needs_a_level():
    a = ensemble_of(simulate_fixed(np.random.default_rng(11)))
    b = ensemble_of(simulate_fixed(np.random.default_rng(12), CROSSING))
    gap = sample_gap(a, b)
    assert {"RATIO_DEPENDS_ON_LEVEL", "CURVES_CROSS"} <= set(gap.flags)
    assert not gap.identifiable and any("R depends on the level" in reason for reason in gap.reasons)
    assert gap.by_level[0].interval[0] > 1 > gap.by_level[-1].interval[1]  # A ahead low, B ahead high
    at_a_level = sample_gap(a, b, target=gap.by_level[0].target)
    assert "CURVES_CROSS" in at_a_level.flags and at_a_level.identifiable  # the user chose where


@pytest.mark.parametrize("seed", range(20, 26))
def test_a_parallel_pair_is_not_flagged(seed):
    a, b = planted_pair(np.random.default_rng(seed))
    gap = sample_gap(a, b)
    assert not {"RATIO_DEPENDS_ON_LEVEL", "CURVES_CROSS"} & set(gap.flags), gap.reasons
    assert all(21 <= row.ratio <= 84 for row in gap.by_level)  # flat: 42x at every level, give or take


def test_crossing_interpolates_in_log_samples_and_marks_the_edges():
    grid = np.array([1e6, 1e7, 1e8])
    curves = np.array([[0.1, 0.2, 0.3], [0.5, 0.6, 0.7], [0.0, 0.0, 0.1]])
    found = crossing(grid, curves, 0.15)
    assert found[0] == pytest.approx(10**6.5) and found[1] == 0.0 and found[2] == np.inf
