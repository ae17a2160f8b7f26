"""The goals of the fitting procedure, checked on planted truths (`fits.planted.procedure`).

The fast versions run in every suite; the slow ones are what `bench/fitting.py` prints, run in
full where their code changed and as smoke checks elsewhere (`tests.goal_lock`; their goals and
replicates in `tests.fits.planted.goals`, each figure with its Monte-Carlo SE and bounds: the
forecasts' coverage over 1600 replicates, where the binomial SE of a 95% coverage is 0.54
points, so its bounds lie 0.9 points either side and clear a 92.5-97.5% window from 93.4% to
96.6%).
"""

import numpy as np
import pytest

from fits.planted.monte_carlo import median, share
from fits.planted.procedure import forecast_check, gap_check, huber_shift, joint_check
from tests.fits.planted.goals import Scale


def test_forecasts_and_law_weights_in_a_quick_check():
    check = forecast_check(25, seed=11)
    assert min(check.coverage.values()) >= 0.84 and check.wrong_family <= 0.2


def test_the_planted_gap_in_a_quick_check():
    check = gap_check(8, seed=12)
    assert check.identifiable >= 0.75 and check.coverage >= 0.75
    assert 42 / 1.5 < check.median_ratio < 42 * 1.5


def test_one_diverged_seed_moves_a_huber_fit_less_than_one_se():
    assert max(huber_shift(seed) for seed in range(10)) < 1
    assert max(huber_shift(seed, huber=None) for seed in range(10)) > 1  # least squares follows it


@pytest.mark.slow
def test_prediction_intervals_cover_93_to_97_percent_at_4_12_and_30x(request):
    scale = Scale.of(request.config)
    n = scale.replicates("forecast_coverage")
    check = forecast_check(n, seed=0)
    coverage = {str(ratio): share(round(hit * n), n).as_dict() for ratio, hit in check.coverage.items()}
    wrong = share(round(check.wrong_family * n), n).as_dict()
    scale.check("forecast_coverage", {"coverage": coverage, "wrong_family": wrong})


@pytest.mark.slow
def test_planted_gaps_are_unbiased_covered_and_never_wide_and_identifiable(request):
    scale = Scale.of(request.config)
    check = gap_check(scale.replicates("planted_gap"), seed=0)
    found = len(check.ratios)
    figures = {
        "median_ratio": median(np.array(check.ratios)).as_dict(),
        "coverage": share(check.covered, found).as_dict(),
        "identifiable": share(found, check.replicates).as_dict(),
        "wide_unflagged": check.wide_unflagged,
    }
    scale.check("planted_gap", figures)


@pytest.mark.slow
def test_huber_keeps_every_fit_within_one_se_of_its_clean_fit(request):
    scale = Scale.of(request.config)
    shifts = [huber_shift(seed) for seed in range(scale.replicates("huber"))]
    within = share(sum(shift < 1 for shift in shifts), len(shifts)).as_dict()
    scale.check("huber", {"within_one_se": within, "largest_shift": max(shifts)})


@pytest.mark.slow
def test_the_joint_law_covers_the_held_out_largest_model_93_to_97_percent(request):
    scale = Scale.of(request.config)
    n = scale.replicates("joint_law")
    scale.check("joint_law", {"coverage": share(round(joint_check(n, seed=0) * n), n).as_dict()})
