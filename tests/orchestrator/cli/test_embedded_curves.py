"""The embedded sweep's own curves (mutual 10-NN against both references, 3 seeds, as a fresh
clone's `orch sweep sweeps/goodview_vs_ntp.yaml` measured them; tests/data/embedded_mutual_knn.csv),
imported and fitted as `orch fit` fits the sweep: the pair whose curves cross is flagged and has
no ratio without a level, and no forecast past the data falls or steps."""

import json

import numpy as np
import pytest

from tests.cli import ROOT, orch
from tests.fits.curve.test_bands import rises_without_steps

EMBEDDED = ROOT / "tests" / "data" / "embedded_mutual_knn.csv"
WALK = [str(round(s)) for s in np.geomspace(32_768, 900e6, 60)]  # the fitted data end at 32K


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('embedded') / 'o.db'}"
    imported = orch("--store", url, "import", str(EMBEDDED), "--sweep", "embedded", "--holdout-above", "32K")
    assert imported.returncode == 0, imported.stderr
    return url


def fit(store: str, out, *args: str) -> dict:
    result = orch("--store", store, "fit", "--out", str(out), "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_good_and_bad_views_against_render_cnn_cross_and_need_a_level(store, tmp_path):
    gaps = fit(store, tmp_path, "--gap", "jepa_good:jepa_bad", "--reference", "render_cnn")["gaps"]
    (gap,) = gaps
    assert {"RATIO_DEPENDS_ON_LEVEL", "CURVES_CROSS"} <= set(gap["flags"]), gap
    assert not gap["identifiable"]
    assert any("R depends on the level" in reason for reason in gap["reasons"])
    ratios = [row["ratio"] for row in gap["ratio_curve"]]
    assert max(ratios) > 1 > min(ratios)  # jepa_good ahead low, jepa_bad ahead high
    level = gap["ratio_curve"][0]["target"]
    (given,) = fit(
        store,
        tmp_path,
        "--gap",
        "jepa_good:jepa_bad",
        "--reference",
        "render_cnn",
        "--at-alignment",
        f"{level:.6f}",
    )["gaps"]
    assert "CURVES_CROSS" in given["flags"]
    assert not any("give the level" in reason for reason in given["reasons"])


def test_no_forecast_of_an_embedded_curve_falls_or_steps_past_the_data(store, tmp_path):
    predict = [arg for size in WALK for arg in ("--predict", size)]
    printed = fit(store, tmp_path, *predict)
    curves = printed["fits"]
    assert len(curves) == 6
    calibration = printed["calibration"]  # 30 held-out cells, from 3 objectives x 3 seeds
    assert (calibration["held_out_cells"], calibration["runs"]) == (30, 9)
    assert calibration["weakest_backtest"]["coverage"] < 1 and calibration["weaker"] == "backtest"
    for curve in curves:
        furthest = max(curve["forecasts"], key=lambda f: f["samples"])
        assert furthest["samples"] == 900e6 and "BEYOND_BACKTESTS" in furthest["flags"]
        shown = [f for f in curve["forecasts"] if f["samples"] >= 32_768 and f["prediction"] is not None]
        assert len(shown) >= 40, curve["objective"]
        walk = np.array([f["prediction"] for f in sorted(shown, key=lambda f: f["samples"])])
        assert rises_without_steps(walk), (curve["objective"], curve["reference"], walk)
