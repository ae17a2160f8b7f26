"""`run_fit` end to end on a real store: fits, gaps, store rows and the report on disk."""

import pytest

from fits.fit import FitError
from fits.results import FitOptions
from fits.run import run_fit
from tests.stores import PLANTED_GAP, simulated_store


def test_a_fit_run_writes_its_rows_and_its_report(tmp_path):
    store = simulated_store(f"sqlite:///{tmp_path / 'o.db'}")
    options = FitOptions(predict=(900_000_000,), gaps=("jepa_good:ntp",), out_dir=str(tmp_path / "r"))
    run = run_fit(store, "sim", options)
    assert {c.key["objective"] for c in run.curves} == {"jepa_good", "ntp"}
    (gap,) = run.gaps
    assert gap.ci[0] <= PLANTED_GAP <= gap.ci[1]
    assert run.backtest()[0]["ratio"] == 2
    assert run.report_path == str(tmp_path / "r" / "sim" / "report.md")
    assert (tmp_path / "r" / "sim" / "scaling_base_dino.svg").exists()
    assert len(store.forecasts_frame("sim")) == sum(len(c.forecasts) for c in run.curves)


def test_a_metric_without_measurements_is_a_fit_error(tmp_path):
    store = simulated_store(f"sqlite:///{tmp_path / 'o.db'}")
    with pytest.raises(FitError, match="no done trials with cka"):
        run_fit(store, "sim", FitOptions(metric="cka", out_dir=str(tmp_path / "r")))
