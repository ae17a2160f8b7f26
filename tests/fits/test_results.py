"""The typed results: calibration counts and the JSON `orch fit --json` prints."""

import json

from fits.results import FitRun, FitSettings


def test_calibration_counts_held_out_cells_within_noise(curves):
    run = FitRun("sim", "sqlite:///o.db", FitSettings(), curves=list(curves.values()))
    cells = [h for c in curves.values() for h in c.held_out]
    assert run.calibration() == {
        "held_out_cells": len(cells),
        "within_seed_noise": sum(h.within_seed_noise for h in cells),
        "fraction": sum(h.within_seed_noise for h in cells) / len(cells),
    }
    assert FitRun("sim", "x", FitSettings()).calibration()["fraction"] is None


def test_the_json_names_every_curve_forecast_and_held_out_cell(curves):
    run = FitRun("sim", "sqlite:///o.db", FitSettings(), curves=list(curves.values()))
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
