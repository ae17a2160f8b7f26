"""The design check on small sweeps: each rule that makes a claim undecidable, named with its
fix, and a design that can decide every claim left alone."""

import json

import pytest

from fits.claims.design import cells_needed
from orchestrator.sweepfile import parse_spec
from orchestrator.sweepfile.decidable import check_design

GRID = {
    "objective": ["jepa_good", "ntp"],
    "model": ["tiny"],
    "data_size": ["4K", "8K", "16K"],
    "seed": [0, 1],
}


def checked(claims: list[dict], **top) -> dict:
    raw = json.loads(json.dumps({"name": "t", "grid": GRID, **top}))
    raw["claims"] = [{"says": "x", "source": "y", **claim} for claim in claims]
    spec = parse_spec(raw, "t.yaml")
    return {check.claim: check for check in check_design(spec, [])}


def test_the_fewest_cells_a_forecast_share_needs():
    assert cells_needed(0.8) == 17  # 0.025 ** (1 / 17) = 0.805; 16 cells give 0.794
    assert cells_needed(0.5) == 6


def test_a_design_that_runs_what_each_claim_reads_is_decidable():
    found = checked(
        [
            {"id": "gap", "kind": "gap", "faster": "jepa_good", "slower": "ntp", "at": "16K", "at_least": 2},
            {"id": "level", "kind": "level", "objective": "ntp", "at": "8K", "value": 0.1, "tolerance": 0.01},
            {"id": "order", "kind": "order", "above": "jepa_good", "below": "ntp"},
        ]
    )
    assert all(check.decidable and not check.faults for check in found.values())
    assert found["gap"].runs == 12 and found["gap"].gpu_hours is None


def test_one_seed_where_a_claim_reads_seed_means_can_never_decide_it():
    found = checked(
        [{"id": "level", "kind": "level", "objective": "ntp", "at": "8K", "value": 0.1, "tolerance": 0.01}],
        exclude=[{"objective": "ntp", "seed": 1}],
    )
    (fault,) = found["level"].faults
    assert fault.never and "one seed of ntp/tiny at 8K" in fault.what and "run 2 seeds" in fault.what


def test_a_gap_read_past_the_fitted_sizes_rests_on_the_means_or_on_nothing():
    claim = {"id": "gap", "kind": "gap", "faster": "jepa_good", "slower": "ntp", "at": "16K", "at_least": 2}
    (held,) = checked([claim], holdout={"data_size": ["16K"]})["gap"].faults
    assert not held.never and "only the seed means can read it" in held.what
    assert "take 16K out of holdout for ntp/tiny" in held.what
    (above,) = checked([claim], holdout={"samples_above": "8K"})["gap"].faults
    assert "(largest 8K; past holdout.samples_above 8K)" in above.what
    assert "raise holdout.samples_above to 16K" in above.what and not above.never
    far = dict(claim, at="64K")
    (unrun, crossing) = checked([far])["gap"].faults
    assert unrun.never and "run and fit 64K for ntp/tiny" in unrun.what
    assert crossing.never and "jepa_good/tiny would reach that level near" in crossing.what


def test_too_few_held_out_cells_for_the_forecast_bar_is_named_with_the_count_it_needs():
    forecast = {"id": "f", "kind": "forecast", "at_least": 0.8}
    (fault,) = checked([forecast], holdout={"data_size": ["16K"]})["f"].faults
    # 2 objectives at 16K, each scored against the world's 2 references
    assert fault.never and "4 held-out cells" in fault.what and "hold out 17 cells at least" in fault.what
    assert checked([dict(forecast, at_least=0.3)], holdout={"data_size": ["16K"]})["f"].decidable


@pytest.mark.parametrize(
    ("claim", "words"),
    [
        (
            {"kind": "order", "above": "jepa_good", "below": "ntp", "at": "32K"},
            "jepa_good/tiny is not run at 32K",
        ),
        ({"kind": "level", "objective": "ntp", "at": "64K", "value": 0.1, "tolerance": 0.01}, "is withheld"),
        ({"kind": "order", "above": "jepa_good", "below": "ntp", "model": "tiny"}, None),
    ],
)
def test_each_means_claim_names_the_run_it_lacks(claim, words):
    (check,) = checked([{"id": "c", **claim}]).values()
    assert check.decidable is (words is None)
    assert words is None or words in check.faults[0].what


def test_a_claim_on_another_eval_set_is_left_to_the_sweep_that_scores_it():
    claim = {"id": "c", "kind": "level", "objective": "ntp", "at": "8K", "value": 0.1, "tolerance": 0.01}
    (check,) = checked([dict(claim, eval_set="flickr")]).values()
    assert check.elsewhere == "eval set flickr; this sweep evaluates on world-1024" and not check.faults


def test_forecast_cells_are_the_points_the_design_makes():
    """A decaying schedule makes each trial one point, its end: past samples_above 8K only the
    16K trials' ends are held out (2 objectives x 2 world references), not their checkpoints."""
    forecast = {"id": "f", "kind": "forecast", "at_least": 0.8}
    (fault,) = checked([forecast], holdout={"samples_above": "8K"})["f"].faults
    assert fault.what.startswith("4 held-out cells:")
