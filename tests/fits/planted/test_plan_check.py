"""`orch next` against simple designs on planted truths (`fits.planted.plan_check`), a smaller version of
what `bench/next.py` prints at 300 replicates. On the same truths and noise, replicate by replicate,
orch next's final gap interval is the narrower more often than the wider against the uniform grid,
random and cheapest-first picks (a sign test), its verdict is right about as often as the uniform
grid's, and its intervals cover the planted gap at 90% and 95% (`tests.fits.planted.goals`)."""

import numpy as np
import pytest

from fits.planted.monte_carlo import median, paired_difference, share
from fits.planted.plan_check import compare_designs, paired, summarize
from tests.fits.planted.goals import SIMPLE_DESIGNS, Scale

BUDGET = 2 * 2 * 12_325_000  # 2x the start's samples


@pytest.mark.slow
def test_orch_next_beats_simple_designs_on_planted_gaps(request):
    scale = Scale.of(request.config)
    outcomes = compare_designs(scale.replicates("orch_next"), seed=1, workers=2)
    mine = summarize(outcomes)["orch next"]
    against = {}
    for design in SIMPLE_DESIGNS:
        pair = paired(outcomes, design)
        against[design] = {
            "narrower": share(pair.narrower, pair.narrower + pair.wider).as_dict(),
            "width_ratio": median(pair.width_ratios).as_dict(),
            "correct_difference": paired_difference(
                pair.right_only, pair.wrong_only, len(pair.width_ratios)
            ).as_dict(),
        }
    figures = {
        "budget": BUDGET,
        "largest_flops": float(mine.flops.max()),
        "coverage": share(int(mine.covered.sum()), mine.covered.size).as_dict(),
        "coverage_90": share(int(mine.covered_90.sum()), mine.covered_90.size).as_dict(),
        "median_width": float(np.median(mine.widths)),
        "against": against,
    }
    scale.check("orch_next", figures)
