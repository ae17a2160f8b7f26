"""`run_fit` end to end on a real store: fits, gaps, store rows and the report on disk."""

from pathlib import Path

import pytest

from db import BaselineRow
from fits.curve.fit import FitError
from fits.curve.settings import FitOptions
from fits.report import write_report
from fits.run.fit_run import run_fit
from fits.run.load import save_fit_run
from tests.stores import PLANTED_GAP, SIM_DESIGN, simulated_store


def fit_and_report(store, options: FitOptions, out: Path):
    """What `orch fit` does at its edge: the run, its report, then its rows."""
    run = run_fit(store, "sim", options, SIM_DESIGN)
    page = write_report(run, out / "sim")
    save_fit_run(store, run)
    return run, page


def test_a_fit_run_writes_its_rows_and_its_report(tmp_path):
    store = simulated_store(f"sqlite:///{tmp_path / 'o.db'}")
    options = FitOptions(predict=(900_000_000,), gaps=("jepa_good:ntp",))
    run, page = fit_and_report(store, options, tmp_path / "r")
    assert {c.key.objective for c in run.curves} == {"jepa_good", "ntp"}
    (gap,) = run.gaps
    assert gap.ci[0] <= PLANTED_GAP <= gap.ci[1]
    assert run.backtest()[0]["ratio"] == 2
    folder = tmp_path / "r" / "sim" / run.fit_id
    assert page == folder / "report.html" and (folder / "report.md").exists()
    assert (folder / "scaling_base_dino.svg").exists()
    assert (tmp_path / "r" / "sim" / "latest").resolve() == folder.resolve()
    assert len(store.table_frame("forecasts", "sim")) == sum(len(c.forecasts) for c in run.curves)


def test_a_metric_without_measurements_is_a_fit_error(tmp_path):
    store = simulated_store(f"sqlite:///{tmp_path / 'o.db'}")
    measured = r"\(measured: mutual_knn@10, mutual_knn@10/layer0, mutual_knn@10/layer1\)"  # no training row
    with pytest.raises(FitError, match=rf"--metric 'cka' was not measured in sim {measured}"):
        run_fit(store, "sim", FitOptions(metric="cka"), SIM_DESIGN)


def test_a_second_fit_writes_its_own_folder_and_scores_no_cell_twice(tmp_path):
    store = simulated_store(f"sqlite:///{tmp_path / 'o.db'}")
    options = FitOptions(predict=(900_000_000,))
    first, first_page = fit_and_report(store, options, tmp_path / "r")
    second, second_page = fit_and_report(store, options, tmp_path / "r")
    assert first.fit_id != second.fit_id and first_page.exists()
    assert (tmp_path / "r" / "sim" / "latest").resolve() == second_page.parent.resolve()
    # the first fit's forecasts were at held-out cells and at 900M: the second fit holds the same
    # cells out (scored in its own held-out table), so no earlier forecast is scored again
    assert second.earlier == () and len(second.curves[0].held_out) == 1


def test_published_gaps_sit_in_the_gaps_row_they_match_and_only_where_measured_alike(tmp_path):
    store = simulated_store(f"sqlite:///{tmp_path / 'o.db'}")
    rows = [
        (reference, model, objective, samples, value)
        for reference in ("dino", "dinov2_vitb")  # the sweep measured against dino only
        for model, objective, samples, value in (
            ("NTP base", "ntp", 900e6, 0.111),  # the last word names the sweep's model
            ("JEPA base", "jepa_good", 21.6e6, 0.109),
        )
    ]
    store.write_baselines(
        [BaselineRow("paper", m, o, "mutual_knn@10", r, "wit-1024", s, v) for r, m, o, s, v in rows]
    )
    run, page = fit_and_report(store, FitOptions(gaps=("jepa_good:ntp",)), tmp_path / "r")
    assert [g.reference for g in run.published] == ["dino"] and "PUBLISHED" in run.published[0].flags
    assert all("PUBLISHED" not in g.flags for g in run.gaps)
    report = (page.parent / "report.md").read_text()
    (row,) = [line for line in report.splitlines() if line.startswith("| jepa_good:ntp |")]
    assert "R <= 41.7x at a* 0.111 (JEPA base / NTP base, paper)" in row  # beside the laws' gap
    assert "Published checkpoints" not in report
