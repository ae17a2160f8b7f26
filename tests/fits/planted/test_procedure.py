"""The goals of the fitting procedure, checked on planted truths (`fits.planted.procedure`).

The fast versions run in every suite; the slow ones are what `bench/fitting.py` prints, run in
full where their code changed and as smoke checks elsewhere (`tests.goal_lock`; their goals and
replicates in `tests.fits.goals`: 400 replicates, where the binomial SE of a 95% coverage is 1.1
points; the coverage window 93-97% at 1600, since at 400 (+-1.8 SE) a calibrated procedure leaves
it by chance about one time in 7 per ratio: seeds 0-3 gave 94.0-97.25% at 30x).
"""

import pytest

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
    check = forecast_check(scale.replicates("forecast_coverage"), seed=0)
    coverage = {str(ratio): share for ratio, share in check.coverage.items()}
    scale.check("forecast_coverage", {"coverage": coverage, "wrong_family": check.wrong_family})


@pytest.mark.slow
def test_planted_gaps_are_unbiased_covered_and_never_wide_and_identifiable(request):
    scale = Scale.of(request.config)
    check = gap_check(scale.replicates("planted_gap"), seed=0)
    figures = {"median_ratio": check.median_ratio, "coverage": check.coverage}
    scale.check(
        "planted_gap", figures | {"identifiable": check.identifiable, "wide_unflagged": check.wide_unflagged}
    )


@pytest.mark.slow
def test_huber_keeps_every_fit_within_one_se_of_its_clean_fit(request):
    scale = Scale.of(request.config)
    shift = max(huber_shift(seed) for seed in range(scale.replicates("huber")))
    scale.check("huber", {"largest_shift": shift})


@pytest.mark.slow
def test_the_joint_law_covers_the_held_out_largest_model_93_to_97_percent(request):
    scale = Scale.of(request.config)
    scale.check("joint_law", {"coverage": joint_check(scale.replicates("joint_law"), seed=0)})
