"""Gaps between fitted curves on a store's frame, and published single-checkpoint gaps."""

import pandas as pd

from fits.curve.curveset import CurveSet
from fits.curve.gaps import Bound
from fits.curve.settings import GapPair
from fits.run.curves import select_points
from fits.run.gap_estimates import gap_estimates, published_gaps
from fits.run.load import flops_per_sample, load_trials, recipes_of
from tests.fits.conftest import BOOTSTRAP
from tests.stores import PLANTED_GAP


def test_the_planted_gap_is_inside_its_interval(simulated, curves):
    store, frame = simulated
    chosen = select_points(frame, BOOTSTRAP)
    per_sample, recipe = flops_per_sample(frame), recipes_of(load_trials(store, "sim"))
    (gap,) = gap_estimates(
        CurveSet(tuple(curves.values())), GapPair("jepa_good", "ntp"), chosen, per_sample, recipe, BOOTSTRAP
    )
    assert (gap.faster, gap.slower, gap.reference) == ("jepa_good", "ntp", "dino")
    assert gap.identifiable and gap.ci[0] <= PLANTED_GAP <= gap.ci[1]
    assert gap.flops_ratio == gap.ratio  # both objectives spend the same FLOPs per sample here
    assert "SAMPLES_NOT_FLOPS" in gap.flags and not any(f.startswith("RECIPES_DIFFER") for f in gap.flags)
    assert gap.ratio_curve and all(row["ratio"] > 0 for row in gap.ratio_curve)


def test_published_checkpoints_give_a_bound_without_an_interval():
    rows = [
        ("paper", "NTP 109M", "ntp", 900e6, 0.111),
        ("paper", "JEPA 109M", "jepa_good", 21.6e6, 0.109),
    ]
    baselines = pd.DataFrame(
        [
            {"source": s, "model": m, "objective": o, "metric": "mutual_knn@10", "reference": "dino"}
            | {"eval_set": "wit-1024", "samples": n, "value": v}
            for s, m, o, n, v in rows
        ]
    )
    (gap,) = published_gaps(baselines, GapPair("jepa_good", "ntp"), "mutual_knn@10")
    assert round(gap.ratio, 1) == 41.7 and gap.ci is None and not gap.identifiable
    assert gap.bound == Bound("<=", gap.ratio)
    assert "UPPER_BOUND:A=0.109<a*=0.111" in gap.flags and "SOURCE:paper" in gap.flags
    assert published_gaps(baselines, GapPair("jepa_good", "ntp"), "cka") == []
