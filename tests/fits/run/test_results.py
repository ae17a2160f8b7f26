"""The typed results: calibration counts and the JSON `orch fit --json` prints."""

import dataclasses
import json

import pytest

from fits.curve.curveset import CurveSet
from fits.curve.settings import FitSettings
from fits.run.results import FitRun


def test_calibration_counts_held_out_cells_within_noise(curves):
    run = FitRun("sim", "sqlite:///o.db", FitSettings(), curves=CurveSet(tuple(curves.values())))
    cells = [h for c in curves.values() for h in c.held_out]
    calibration = run.calibration()
    assert calibration["held_out_cells"] == len(cells) == 2
    assert calibration["within_seed_noise"] == sum(h.within_seed_noise for h in cells)
    assert calibration["fraction"] == calibration["within_seed_noise"] / len(cells)
    assert calibration["runs"] == sum(h.seeds for h in cells)  # final checkpoints: a run a cell
    weakest = min(run.backtest(), key=lambda row: row["coverage"])
    assert calibration["weakest_backtest"] == weakest
    held_out_weaker = calibration["fraction"] <= weakest["coverage"]
    assert calibration["weaker"] == ("held_out" if held_out_weaker else "backtest")
    assert FitRun("sim", "x", FitSettings()).calibration()["fraction"] is None


def test_held_out_checkpoints_of_one_run_per_seed_count_as_that_run(curves):
    run = FitRun("sim", "x", FitSettings(points="all"), curves=CurveSet(tuple(curves.values())))
    seeds = {c.key.objective: max(h.seeds for h in c.held_out) for c in curves.values() if c.held_out}
    assert run.calibration()["runs"] == sum(seeds.values())


def test_the_json_names_every_curve_forecast_and_held_out_cell(curves):
    run = FitRun("sim", "sqlite:///o.db", FitSettings(), curves=CurveSet(tuple(curves.values())))
    payload = json.loads(json.dumps(run.as_dict()))
    good = next(f for f in payload["fits"] if f["objective"] == "jepa_good")
    assert set(good["held_out"][0]) == {
        "samples",
        "observed",
        "seeds",
        "prediction",
        "pi",
        "z",
        "within_seed_noise",
    }
    assert set(good["forecasts"][0]) == {
        "samples",
        "seeds",
        "prediction",
        "ci",
        "pi",
        "extrapolation",
        "weights",
        "flags",
    }
    assert len(good["points"]) == 7 and good["law"] == curves["jepa_good"].fit.law
    assert set(good["weights"]) == set(good["laws"]) and good["bands"] == "bootstrap:200"
    assert {cell["ratio"] for cell in good["backtest"]} == {2, 4}


def test_a_fit_run_its_curves_and_its_verdicts_are_frozen_once_built(curves):
    from fits.claims.claim import Claim, Outcome, Region, Verdict

    claim = Claim(id="c", kind="order", says="s", source="t", region=Region(0.0), above="a", below="b")
    verdict = Verdict(claim, Outcome.INCONCLUSIVE, None, None, "no estimate", ["why"])
    run = FitRun("sim", "x", FitSettings(), curves=CurveSet(tuple(curves.values())), verdicts=(verdict,))
    for value, field in ((run, "verdicts"), (run, "curves"), (run.curves, "skipped"), (verdict, "missing")):
        assert dataclasses.is_dataclass(value) and type(value).__dataclass_params__.frozen
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field, ())
    assert verdict.reasons == ("why",)  # lists given are held as tuples: nothing appends to them
