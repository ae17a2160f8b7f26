"""Verdicts on planted truths (`fits.planted.calibration`): a true claim supported, a false one
contradicted, an underpowered design seldom wrong. The quick check runs in every suite; the
slow ones are the goals at 200 replicates (`tests.fits.planted.goals`: each rate's Clopper-Pearson
bound clears its goal by 2.7 SE at the least there), what `bench/fitting.py --only verdicts`
prints at 300."""

import pytest

from fits.planted.calibration import verdict_rates
from fits.planted.sparse import DESIGNS, TRUTHS, design_name, sparse_rates
from tests.fits.planted.goals import Scale


def test_planted_claims_get_their_verdicts_in_a_quick_check():
    rates = verdict_rates(4, seed=5)
    for experiment in ("gap_true", "order_true"):
        assert rates.share(experiment, "supported") >= 0.75, rates.counts
    for experiment in ("gap_false", "order_false"):
        assert rates.share(experiment, "contradicted") >= 0.75, rates.counts
    assert rates.share("gap_underpowered_true", "contradicted") == 0, rates.counts


@pytest.mark.slow
def test_verdict_rates_meet_their_goals_on_their_bounds(request):
    scale = Scale.of(request.config)
    rates = verdict_rates(scale.replicates("verdict_rates"), seed=0, workers=2)
    scale.check("verdict_rates", {"replicates": rates.replicates, "counts": rates.counts})


def test_one_seed_at_one_or_two_sizes_is_never_decided_and_every_design_is_judged():
    """No law and no SE: nothing measures the noise, so no verdict can be decided."""
    rates = sparse_rates(2, seed=1)
    assert set(rates.counts) == {design_name(s, n, truth) for s, n in DESIGNS for truth in TRUTHS}
    for sizes in (1, 2):
        for truth in TRUTHS:
            assert rates.counts[design_name(sizes, 1, truth)] == {"inconclusive": 2}


@pytest.mark.slow
def test_sparse_verdicts_are_seldom_wrong_on_their_bounds(request):
    scale = Scale.of(request.config)
    rates = sparse_rates(scale.replicates("sparse_verdicts"), seed=0, workers=2)
    scale.check("sparse_verdicts", {"replicates": rates.replicates, "counts": rates.counts})
