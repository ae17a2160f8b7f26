"""The one module that touches the store: typed reads, and a fit run written in one transaction."""

from dataclasses import asdict

from fits.curve.curveset import CurveSet
from fits.run.load import load_earlier_forecasts, load_measurements, load_trials, recipes_of, save_fit_run
from fits.run.results import FitRun
from orchestrator.sweepfile import TrainConfig
from tests.fits.conftest import BOOTSTRAP


def test_measurements_carry_their_trial_and_whether_they_are_final(simulated):
    _, frame = simulated
    assert set(frame.objective) == {"jepa_good", "ntp"}
    assert frame.held_out.dtype == bool and frame.is_final.any() and not frame.is_final.all()
    store, _ = simulated
    assert load_measurements(store, "sim", "mutual_knn@10", "no-such-reference").empty


def test_recipes_are_read_from_the_trials_the_store_recorded(simulated):
    store, _ = simulated
    found = recipes_of(load_trials(store, "sim"))
    assert set(found) == {"jepa_good", "ntp"}
    assert found["ntp"]["lr"] == 1e-3
    assert set(found["ntp"]) == set(asdict(TrainConfig(32, 1e-3, 0.0, 0.0, "cosine", 1.0, None, None)))


def test_a_fit_run_is_stored_and_its_forecasts_read_back(simulated, curves, tmp_path):
    store, _ = simulated
    run = FitRun("sim", store.url, BOOTSTRAP, curves=CurveSet(tuple(curves.values())), created=1.0)
    before = len(load_earlier_forecasts(store, "sim"))
    save_fit_run(store, run)
    stored = load_earlier_forecasts(store, "sim")
    assert len(stored) - before == sum(len(c.forecasts) for c in curves.values())
    assert set(stored.objective) == {"jepa_good", "ntp"}
