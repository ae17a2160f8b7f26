"""Seed bootstrap for every law: whole runs resampled, a thousand refits at once."""

import numpy as np
import pytest

from fits.curve.bootstrap import bootstrap_refits, resampled_means
from fits.curve.fit import curve_points, fit_laws
from fits.curve.laws import LAWS, saturating
from tests.fits.truth import SIGMA, SIZES, TRUTH, simulate_fixed


def test_every_law_is_refitted_and_the_spread_matches_the_fit_errors():
    points = simulate_fixed(np.random.default_rng(1))
    fits = fit_laws(points)
    refits = bootstrap_refits(points, fits, draws=1000)
    assert set(refits) == set(LAWS) and all(r.shape == (1000, len(LAWS[n].params)) for n, r in refits.items())
    fit = fits["saturating"]
    # the bootstrap sees seed noise only; the fit's errors also carry any excess chi-square
    errors = np.array(list(fit.errors.values())) / np.sqrt(max(1.0, fit.chi_square / fit.dof))
    spread = refits["saturating"].std(axis=0)
    assert np.all((spread > errors / 1.5) & (spread < errors * 1.5)), (spread, errors)


def test_whole_runs_are_resampled_when_points_are_checkpoints_of_the_same_runs():
    samples = np.repeat(SIZES, 3)
    values = saturating(samples, **TRUTH) + np.random.default_rng(2).normal(0, SIGMA, samples.size)
    points = curve_points(samples, values, runs=np.tile([0, 1, 2], len(SIZES)))
    means = resampled_means(points, 500, np.random.default_rng(3))
    # every draw is a mean of three (inflated) whole runs: its deviations move together
    runs = points.run_values - points.mean
    # each draw is a weighted sum of the three runs' whole deviation rows, so the first two
    # columns of the draws are as correlated as those two columns across runs
    expected = np.corrcoef(runs[:, 0], runs[:, 1])[0, 1]
    drawn = np.corrcoef(means[:, 0] - points.mean[0], means[:, 1] - points.mean[1])[0, 1]
    assert means.shape == (500, len(SIZES)) and drawn == pytest.approx(expected, abs=0.1)


def test_the_same_seed_gives_the_same_refits():
    points = simulate_fixed(np.random.default_rng(4))
    fits = {"power": fit_laws(points)["power"]}
    first, second = (bootstrap_refits(points, fits, draws=50, seed=9)["power"] for _ in range(2))
    np.testing.assert_array_equal(first, second)
    assert (first.std(axis=0) > 0).all()
