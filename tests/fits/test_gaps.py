"""Sample gaps: a planted 42x is covered; flags for single checkpoints and asymptotes."""

import numpy as np
import pytest

from fits.gaps import invert, sample_gap
from tests.fits.truth import SIZES, planted_pair


def test_gap_interval_covers_a_planted_42x():
    fit_a, fit_b = planted_pair(np.random.default_rng(5))
    gap = sample_gap(fit_a, fit_b, samples_b=SIZES[-1])
    assert gap.interval[0] <= 42 <= gap.interval[1]
    assert gap.ratio == pytest.approx(42, rel=0.5)
    assert "N_A_OUTSIDE_OBSERVED_RANGE" not in gap.flags


@pytest.mark.slow
def test_gap_interval_coverage_over_simulations():
    rng = np.random.default_rng(6)
    covered = [
        (g := sample_gap(*planted_pair(rng), SIZES[-1])).interval[0] <= 42 <= g.interval[1]
        for _ in range(100)
    ]
    assert np.mean(covered) >= 0.88


def test_gap_flags_single_checkpoint_and_asymptote():
    fit_a, _ = planted_pair(np.random.default_rng(8))
    single = sample_gap(fit_a, None, samples_b=900e6, observed_b=0.15, observed_sigma_b=0.003)
    assert "B_SINGLE_CHECKPOINT" in single.flags and single.ratio is not None
    unreachable = sample_gap(fit_a, None, samples_b=900e6, observed_b=0.5)
    assert "TARGET_AT_OR_ABOVE_A_ASYMPTOTE" in unreachable.flags and unreachable.ratio is None


def test_invert_finds_the_samples_for_a_level():
    fit_a, _ = planted_pair(np.random.default_rng(9))
    level = float(fit_a.predict(2e6))
    assert invert(fit_a, level) == pytest.approx(2e6, rel=1e-6)
