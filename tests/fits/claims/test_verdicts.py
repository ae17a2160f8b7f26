"""Verdicts on planted curves: the region rules, the model-free gap beside the law's, a bound
that can only contradict, no verdict on an unbounded law far past the data, FLOPs, forecasts."""

import math
from dataclasses import replace

import numpy as np
import pytest

from fits.claims.claim import Claim, ClaimSet, Region
from fits.claims.verdicts import judge
from fits.curve.curveset import HeldOutCell
from fits.curve.fit import curve_points
from fits.planted.calibration import planted_curve, planted_run
from fits.planted.procedure import SIZES, simulate
from tests.fits.truth import TRUTH

SLOWED = dict(TRUTH, b=TRUTH["b"] * 42 ** TRUTH["alpha"])


def gap_claim(region: Region, **fields) -> Claim:
    return Claim(
        id="g", kind="gap", says="A needs fewer", source="t", region=region, faster="A", slower="B", **fields
    )


@pytest.fixture(scope="module")
def pair():
    rng = np.random.default_rng(3)
    return planted_curve("A", simulate(rng, TRUTH)), planted_curve("B", simulate(rng, SLOWED))


def test_a_planted_42x_is_supported_and_the_seed_means_agree(pair):
    verdict = judge(gap_claim(Region.around(42, 2, factor=True)), planted_run(*pair))
    assert verdict.verdict == "supported" and "laws' gap" in verdict.basis
    assert verdict.interval[0] <= 42 <= verdict.interval[1]
    low, high = verdict.measured["interval"]
    assert low <= 42 <= high and "LAW_AND_MEANS_DISAGREE" not in verdict.flags
    assert judge(gap_claim(Region.around(5, 2, factor=True)), planted_run(*pair)).verdict == "contradicted"
    assert judge(gap_claim(Region(20, 200)), planted_run(*pair)).verdict == "supported"


def test_the_gap_in_flops_is_the_gap_in_samples_times_the_cost_per_sample(pair):
    costs = {("A", "m"): 2e9, ("B", "m"): 1e9}  # an A sample costs twice a B sample
    run = replace(planted_run(*pair), flops_per_sample=costs)
    samples = judge(gap_claim(Region(1, 1000)), run)
    flops = judge(gap_claim(Region(1, 1000), per="flops"), run)
    assert flops.value == pytest.approx(samples.value / 2)
    assert flops.axes["samples"]["value"] == pytest.approx(samples.value)
    assert samples.axes["flops"]["value"] == pytest.approx(samples.value / 2)
    assert any("samples, not FLOPs" in c for c in samples.caveats) and not any(
        "FLOPs" in c for c in flops.caveats
    )
    no_flops = judge(gap_claim(Region(1, 1000), per="flops"), planted_run(*pair))
    assert no_flops.verdict == "inconclusive" and "no FLOPs" in no_flops.reasons[0]


def test_where_the_law_is_withheld_the_seed_means_decide_and_say_so(pair):
    a, b = pair
    b.fits[b.fit.law].lof_p = 1e-9  # as if B's heaviest law failed the lack-of-fit test
    try:
        verdict = judge(gap_claim(Region.around(42, 2, factor=True)), planted_run(a, b))
    finally:
        b.fits[b.fit.law].lof_p = 0.5
    assert verdict.verdict == "supported" and "seed means' gap" in verdict.basis
    assert any("lack-of-fit" in reason for reason in verdict.reasons)


def test_a_bound_contradicts_a_claim_it_excludes_and_never_supports_one():
    rng = np.random.default_rng(4)
    a = planted_curve("A", simulate(rng, TRUTH, sizes=SIZES[-5:]))  # above B's levels from its start
    b = planted_curve("B", simulate(rng, dict(TRUTH, b=TRUTH["b"] * 2000 ** TRUTH["alpha"])))
    small = judge(gap_claim(Region.around(2, 2, factor=True)), planted_run(a, b))
    assert small.verdict == "contradicted" and small.value is None and small.basis.startswith("a bound: R >=")
    large = judge(gap_claim(Region(1000, math.inf)), planted_run(a, b))
    assert large.verdict == "inconclusive" and large.missing


def test_no_level_verdict_rests_on_an_unbounded_law_far_past_the_data():
    rng = np.random.default_rng(5)
    samples = np.repeat(SIZES, 3)
    power = planted_curve(
        "A", curve_points(samples, 0.01 * samples**0.2 + rng.normal(0, 0.002, samples.size))
    )
    claim = Claim(
        id="l",
        kind="level",
        says="s",
        source="t",
        region=Region(0.0, 1.0),
        objective="A",
        at=int(SIZES[-1] * 3),
    )
    verdict = judge(claim, planted_run(power))
    if power.ensemble.withheld(claim.at):  # only unbounded laws reach that far
        assert verdict.verdict == "inconclusive" and "unbounded" in verdict.reasons[0]
    measured = judge(Claim(**{**claim.__dict__, "at": int(SIZES[2])}), planted_run(power))
    assert "measured mean of 3 seeds" in measured.basis and measured.interval[0] < measured.value


def test_a_forecast_claim_counts_held_out_cells_with_a_clopper_pearson_interval(pair):
    a, b = pair
    cell = HeldOutCell(1e8, 0.1, 3, 0.1, (0.09, 0.11), 0.0, True)
    miss = HeldOutCell(2e8, 0.2, 3, 0.1, (0.09, 0.11), 5.0, False)
    claim = Claim(id="f", kind="forecast", says="s", source="t", region=Region(0.8, 1.0))
    verdict = judge(claim, planted_run(replace(a, held_out=(cell,) * 19 + (miss,)), b))
    assert verdict.value == pytest.approx(0.95)
    assert verdict.interval == pytest.approx((0.7513, 0.9987), abs=1e-3)  # Clopper-Pearson, 19 of 20
    assert verdict.verdict == "inconclusive"  # 0.75 < 0.8: twenty cells cannot show 80%
    empty = judge(claim, planted_run(a, b))
    assert empty.verdict == "inconclusive" and "held-out runs" in empty.missing[0]


def test_a_level_against_a_baseline_is_judged_on_the_difference_with_the_baselines_noise(pair):
    import pandas as pd

    from db import BaselineRow

    a, _ = pair
    at = int(SIZES[4])
    mean = float(a.points.mean[np.flatnonzero(np.isclose(a.points.samples, at))[0]])
    claim = Claim(
        id="b",
        kind="level",
        says="s",
        source="t",
        region=Region(0.0, math.inf),
        objective="A",
        at=at,
        baseline="mpnet",
    )
    run = planted_run(a)
    missing = judge(claim, run)
    assert (
        missing.verdict == "inconclusive"
        and "no baseline 'mpnet' of mutual_knn@10 on r (e)" in missing.reasons[0]
    )
    assert "orch baselines measure" in missing.missing[0]

    def baselines(*rows: BaselineRow) -> pd.DataFrame:
        return pd.DataFrame([vars(row) for row in rows])

    below = BaselineRow(
        "measured", "mpnet", "contrastive", "mutual_knn@10", "r", "e", None, mean - 0.05, se=0.001
    )
    run = replace(run, baselines=baselines(below))
    level = judge(Claim(**{**claim.__dict__, "baseline": None}), run)
    verdict = judge(claim, run)
    assert verdict.verdict == "supported" and verdict.value == pytest.approx(mean - below.value)
    widened = 1.959964 * 0.001
    assert verdict.interval[0] == pytest.approx(level.interval[0] - below.value - widened)
    assert verdict.interval[1] == pytest.approx(level.interval[1] - below.value + widened)
    above = BaselineRow("paper", "mpnet", "contrastive", "mutual_knn@10", "r", "e", None, mean + 0.05)
    run = replace(run, baselines=baselines(above))
    assert judge(claim, run).verdict == "contradicted"
    run = replace(
        run, baselines=baselines(above, below)
    )  # a measured value is preferred: it carries its noise
    assert judge(claim, run).verdict == "supported"


def test_a_lower_confidence_gives_a_narrower_interval_and_says_so(pair):
    a, b = pair
    claim = gap_claim(Region(21, 84), at=int(SIZES[-2]))
    usual, narrower = judge(claim, planted_run(a, b)), judge(claim, planted_run(a, b), confidence=0.90)
    assert usual.value == narrower.value and "95%" in usual.basis and "90%" in narrower.basis
    assert usual.interval[0] < narrower.interval[0] < narrower.interval[1] < usual.interval[1]


def test_claims_stating_the_same_thing_are_judged_once_and_each_keeps_its_own_words(pair, monkeypatch):
    import fits.claims.verdicts as verdicts

    judged = []
    real = verdicts.judge
    monkeypatch.setattr(verdicts, "judge", lambda claim, *a: judged.append(claim.id) or real(claim, *a))
    stated = [
        replace(gap_claim(Region.around(42, 2, factor=True)), id=f"g{i}", says=f"copy {i}")
        for i in range(500)
    ]
    stated.append(gap_claim(Region.around(5, 2, factor=True)))
    found = verdicts.judge_all(ClaimSet(tuple(stated), "t"), planted_run(*pair))
    assert judged == ["g0", "g"]  # one judgement a distinct statement
    assert [v.claim.id for v in found] == [c.id for c in stated] and found[7].claim.says == "copy 7"
    assert {v.verdict for v in found[:-1]} == {"supported"} and found[-1].verdict == "contradicted"
    assert found[3].interval == found[0].interval == real(stated[3], planted_run(*pair)).interval
