"""Verdicts on the evidence a paper's reader holds: a few published points, one seed each, some
with a standard error. Nothing is supported or contradicted from a noise nobody measured; a
point's own SE decides what it can; single checkpoints bound a gap only beyond their SEs."""

import math

import pytest

from fits.claims.claim import Claim, Region
from fits.claims.kinds import CATALOG
from fits.claims.verdicts import judge
from fits.curve.curveset import CurveKey, CurveSet, Unfitted
from fits.curve.fit import curve_points
from fits.report.claims import verdict_interval
from orchestrator.errors import SpecError
from orchestrator.sweepfile.claims import parse_claims

METRIC, REFERENCE, EVAL_SET = "mutual_knn@10", "dinov2_vitb", "wit-1024"

# The preprint's four points with a sample count (§4.2): (objective, model, samples, value)
PAPER = (
    ("jepa_good", "base", 21.6e6, 0.109),
    ("ntp", "base", 900e6, 0.111),
    ("jepa_good", "33M", 21.6e6, 0.108),
    ("ntp", "33M", 21.6e6, 0.071),
)


def imported(points=PAPER, se: float | None = None) -> CurveSet:
    """One curve a point, as `orch import` reads a row: one seed, and the row's SE where given."""
    curves = []
    for objective, model, samples, value in points:
        key = CurveKey(objective, model, METRIC, REFERENCE, EVAL_SET)
        given = None if se is None else [se]
        curves.append(Unfitted(key, curve_points([samples], [value], se=given), "one point"))
    return CurveSet((), unfitted=tuple(curves))


def claim(kind: str, region: Region, **fields) -> Claim:
    return Claim(id=kind, kind=kind, says="", source="t", region=region, **fields)


GAP = claim(
    "gap", Region.around(42, 2, factor=True), faster="jepa_good", slower="ntp", at=900e6, model="base"
)
LEVEL_33M = claim(
    "level", Region.around(0.108, 0.01, factor=False), objective="jepa_good", at=21.6e6, model="33M"
)
ORDER_AT = claim("order", Region(0.0, math.inf), above="jepa_good", below="ntp", at=21.6e6, model="33M")
DIFFERENCE = claim(
    "difference", Region(0.02, math.inf), above="jepa_good", below="ntp", at=21.6e6, model="33M"
)


@pytest.mark.parametrize("stated", [GAP, LEVEL_33M, ORDER_AT, DIFFERENCE], ids=lambda c: c.kind)
def test_one_seed_and_no_se_decides_nothing_that_needs_a_noise_estimate(stated):
    verdict = judge(stated, imported())
    assert verdict.verdict == "inconclusive" and verdict.interval is None
    assert any("a second seed of" in wanted for wanted in verdict.missing), verdict.missing
    assert verdict_interval(verdict) == "-"


def test_the_level_reads_the_measured_point_and_names_the_missing_seed():
    verdict = judge(LEVEL_33M, imported())
    assert "jepa_good/33M at 21.6M is one seed (0.108)" in verdict.reasons[0]
    assert "a second seed of jepa_good/33M at 21.6M" in verdict.missing


def test_an_imported_se_decides_a_level_and_the_basis_says_so():
    verdict = judge(LEVEL_33M, imported(se=0.002))
    assert verdict.verdict == "supported" and verdict.value == pytest.approx(0.108)
    assert verdict.interval == pytest.approx((0.108 - 1.96 * 0.002, 0.108 + 1.96 * 0.002), abs=1e-4)
    assert "SE given with the imported row" in verdict.basis
    far = claim(
        "level", Region.around(0.150, 0.01, factor=False), objective="jepa_good", at=21.6e6, model="33M"
    )
    assert judge(far, imported(se=0.002)).verdict == "contradicted"


def test_single_checkpoints_bound_the_gap_only_beyond_their_ses():
    bounded = judge(GAP, imported(se=0.0005))  # 0.109 < 0.111 by 4 SEs of the difference
    assert bounded.verdict == "inconclusive" and bounded.interval == pytest.approx((0.0, 900 / 21.6))
    assert bounded.basis == "a bound from single checkpoints: R <= 41.7x in samples"
    assert bounded.missing  # "42 within x2" spans [21, 84]: the bound leaves it open
    at_least_50 = claim("gap", Region(50, math.inf), faster="jepa_good", slower="ntp", at=900e6, model="base")
    assert judge(at_least_50, imported(se=0.0005)).verdict == "contradicted"
    noisy = judge(at_least_50, imported(se=0.005))  # the two points are within noise: no bound
    assert noisy.verdict == "inconclusive" and noisy.interval is None
    unknown = judge(at_least_50, imported())
    assert unknown.verdict == "inconclusive"
    assert any("R <= 41.7x as the point values suggest" in why for why in unknown.reasons)


def test_a_difference_at_one_size_is_judged_on_both_points_ses():
    supported = judge(DIFFERENCE, imported(se=0.003))  # 0.108 - 0.071 = 0.037 +- 1.96 * 0.0042
    assert supported.verdict == "supported" and supported.value == pytest.approx(0.037)
    assert supported.interval[0] > 0.02
    halved = claim(
        "difference", Region(0.05, math.inf), above="jepa_good", below="ntp", at=21.6e6, model="33M"
    )
    assert judge(halved, imported(se=0.003)).verdict == "contradicted"
    assert judge(ORDER_AT, imported(se=0.003)).verdict == "supported"


def test_a_difference_claim_is_read_from_a_claims_file_and_needs_its_size():
    raw = [
        {
            "id": "gap_33m",
            "says": "at 21.6M a 33M JEPA beats a 33M NTP by at least 0.02",
            "source": "§4.2",
            "kind": "difference",
            "above": "jepa_good",
            "below": "ntp",
            "at": "21.6M",
            "model": "33M",
            "at_least": 0.02,
        }
    ]
    (read,) = parse_claims(raw, "c.yaml")
    assert (read.kind, read.at, read.region.low, read.region.high) == (
        "difference",
        21_600_000,
        0.02,
        math.inf,
    )
    del raw[0]["at"]
    with pytest.raises(SpecError, match="at"):
        parse_claims(raw, "c.yaml")


def test_a_reason_names_the_model_the_claim_is_on():
    points = (*PAPER, ("jepa_good", "33M", 75e6, 0.12), ("jepa_good", "33M", 260e6, 0.13))
    verdict = judge(GAP, imported(points))
    text = " ".join(verdict.reasons + verdict.missing)
    assert "jepa_good/base" in text and "33M" not in text


def test_an_order_with_no_interval_prints_no_infinite_interval():
    verdict = judge(
        claim("order", Region(0.0, math.inf), above="jepa_good", below="ntp", model="base"), imported()
    )
    assert verdict.verdict == "inconclusive" and verdict_interval(verdict) == "-"
    assert CATALOG["order"].show(float("nan")) == "-" and CATALOG["gap"].show(math.inf) == "inf"
