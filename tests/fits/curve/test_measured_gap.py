"""The gap read from seed means with no law: its crossings, its interval from resampled seeds
(whole runs where the points are one run's checkpoints), and where it has none."""

import numpy as np
import pytest

from fits.curve.fit import curve_points
from fits.curve.measured_gap import measured_gap, measured_level
from fits.planted.procedure import simulate
from tests.fits.truth import TRUTH

SLOWED = dict(TRUTH, b=TRUTH["b"] * 42 ** TRUTH["alpha"])


def test_the_measured_gap_needs_two_seeds_and_both_crossings_inside():
    rng = np.random.default_rng(6)
    one_a, one_b = simulate(rng, TRUTH, seeds=1), simulate(rng, SLOWED, seeds=1)
    target = float(one_a.mean[1] + one_a.mean[2]) / 2
    single = measured_gap(one_a, one_b, target=target)
    assert single.interval is None and "one seed" in single.reasons[0] and single.ratio > 1
    a, b = simulate(rng, TRUTH), simulate(rng, SLOWED)
    outside = measured_gap(a, b, target=float(b.mean[-1]) + 0.05)
    assert outside.ratio is None and "never reach" in outside.reasons[-1]


def test_a_planted_42x_read_from_the_means_covers_42_across_seeds():
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(20):
        a, b = simulate(rng, TRUTH), simulate(rng, SLOWED)
        gap = measured_gap(a, b, samples_b=float(b.samples[-1]))
        covered += gap.interval is not None and gap.interval[0] <= 42 <= gap.interval[1]
    assert covered >= 17  # a 95% interval, 20 draws: 17 or more in 98% of runs of this test


def test_checkpoints_of_one_run_per_seed_are_resampled_as_whole_runs():
    samples = np.geomspace(1e3, 1e6, 10)
    runs = np.repeat(np.arange(3), 10)
    values = lambda slow: np.concatenate(  # noqa: E731
        [0.2 - 0.1 * (samples / slow / 1e3) ** -0.3 + 0.002 * seed for seed in range(3)]
    )
    a = curve_points(np.tile(samples, 3), values(1.0), runs=runs)
    b = curve_points(np.tile(samples, 3), values(8.0), runs=runs)
    assert a.run_values is not None
    gap = measured_gap(a, b, target=float(measured_level(b, 3e5)))
    assert gap.ratio == pytest.approx(8, rel=0.1)
    assert gap.interval is not None and gap.interval[0] <= 8 <= gap.interval[1]


def test_a_lone_seed_point_beside_replicated_ones_keeps_the_interval():
    """A new run of a new size adds its last checkpoint as a one-seed point (what orch next's
    picks do): the seeds elsewhere still measure the noise, so the gap keeps its interval, and
    the lone point moves by the pooled scatter rather than not at all."""
    rng = np.random.default_rng(6)
    a, b = simulate(rng, TRUTH), simulate(rng, SLOWED)
    lone = float(np.sqrt(a.samples[3] * a.samples[4]))  # between two replicated sizes
    values = np.concatenate([np.concatenate(a.replicates), [float(a.mean[3] + a.mean[4]) / 2]])
    samples = np.concatenate([np.repeat(a.samples, a.seeds), [lone]])
    with_lone = curve_points(samples, values)
    assert with_lone.seeds.min() == 1 and with_lone.pooled_df > 0
    gap = measured_gap(with_lone, b, samples_b=float(b.samples[-1]))
    assert gap.interval is not None and gap.interval[0] <= 42 <= gap.interval[1]
    lone_only = curve_points(samples[-2:], values[-2:])  # two lone seeds: nothing measures the noise
    assert "one seed" in measured_gap(lone_only, b, samples_b=float(b.samples[-1])).reasons[0]
