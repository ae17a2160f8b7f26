"""`latest_curves`: each curve's newest checkpoint that every seed reached, with the seeds' mean
and its SE (their spread; one seed: its eval-item SE)."""

import pandas as pd
import pytest

from orchestrator.run.status import latest_curves


def _rows(objective: str, seed_rows: dict[int, list[tuple[int, float, float | None]]]) -> list[dict]:
    curve = {"objective": objective, "model": "tiny", "data_size": 4096, "reference": "r", "eval_set": "e"}
    return [
        curve | {"trial_key": f"{objective}-{seed}", "samples_seen": s, "value": v, "se": se}
        for seed, points in seed_rows.items()
        for s, v, se in points
    ]


def test_the_newest_checkpoint_every_seed_reached_with_the_seeds_se():
    ahead = [(0, 0.01, 0.002), (1024, 0.05, 0.002), (2048, 0.07, 0.002)]
    behind = [(0, 0.02, 0.002), (1024, 0.06, 0.002)]
    alone = [(0, 0.03, 0.004), (2048, 0.09, 0.003)]
    frame = pd.DataFrame(_rows("a", {0: ahead, 1: behind}) + _rows("b", {0: alone}))
    a, b = latest_curves(frame)
    assert (a["samples_seen"], a["seeds"], a["mean"]) == (1024, 2, pytest.approx(0.055))
    assert a["se"] == pytest.approx(0.005)  # sd of 0.05 and 0.06 is 0.01 / sqrt(2), over sqrt(2)
    assert a["se_from"] == "seeds"
    assert (b["samples_seen"], b["seeds"], b["se"], b["se_from"]) == (2048, 1, 0.003, "eval items")


def test_one_seed_without_an_se_has_none():
    frame = pd.DataFrame(_rows("a", {0: [(512, 0.04, None)]}))
    (curve,) = latest_curves(frame)
    assert curve["se"] is None and curve["se_from"] is None
