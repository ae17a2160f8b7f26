"""Data-parallel trials through Ray Train, with real processes: a sweep that mixes a 2-worker trial
(its workers spread over the two nodes) with a one-process trial; SIGKILL of the driver mid-trial
and the rerun; a worker killed mid-trial and retried from its checkpoint; the Tune trial's own
process killed, whose workers' placement group only the driver can then release. Each gives
every row once, and the rows of an uninterrupted 2-worker run."""

import os
import signal
from pathlib import Path

import psutil
import pytest
import yaml

from db import Store
from orchestrator.run.scheduler import SweepOptions, run_sweep
from orchestrator.spec import load_spec, parse_spec
from orchestrator.training.loop import run_trial
from tests.drivers import expected_rows, run_orch, start_driver, wait_for, write_sweep

pytestmark = [pytest.mark.processes, pytest.mark.usefixtures("ray_cluster")]

ROW_KEY = ["samples_seen", "metric", "reference", "eval_set"]


def dp_raw(name: str, models=("tiny",), placement="pack") -> dict:
    """A 4,000-sample JEPA trial per model: `tiny` on 2 workers of half a CPU, others alone."""
    return {
        "name": name,
        "eval": {"metrics": ["mutual_knn@10"], "checkpoints": {"per_octave": 1, "first": 256}},
        "grid": {"objective": ["jepa_good"], "model": list(models), "data_size": ["4K"], "seed": [0]},
        "resources": {"cpu": 1, "model": {"tiny": {"workers": 2, "cpu": 0.5, "placement": placement}}},
    }


def rows_of(store: Store, sweep: str, key: str) -> dict[tuple, float]:
    frame = store.measurements_frame(sweep)
    frame = frame[frame.trial_key == key]
    assert not frame.duplicated(ROW_KEY).any()
    return {tuple(row[column] for column in ROW_KEY): row.value for _, row in frame.iterrows()}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> dict[tuple, float]:
    """Rows of the 2-worker trial, run without interruption beside a one-process trial."""
    folder = tmp_path_factory.mktemp("mixed")
    url = f"sqlite:///{folder / 'orch.db'}"
    raw = dp_raw("mixed", models=("tiny", "small"), placement="spread")
    spec = parse_spec(raw, str(folder / "mixed.yaml"), text=yaml.safe_dump(raw))
    outcome = run_sweep(spec, url, SweepOptions(storage=folder))
    assert outcome.counts == {"done": 2}
    store = Store.open(url)
    trials = store.trials_frame("mixed").set_index("model")
    assert set(trials.attempts) == {1}
    frame = store.measurements_frame("mixed")
    assert len(frame) == sum(expected_rows(t) for t in spec.trials)  # every row, once
    fit = run_orch("fit", "mixed", "--store", url, "--points", "all", cwd=folder)
    assert fit.returncode == 0, fit.stderr
    assert set(store.table_frame("fits", "mixed").model) == {"tiny", "small"}  # fitted alike
    tiny = spec.trials[0] if spec.trials[0].model == "tiny" else spec.trials[1]
    return rows_of(store, "mixed", tiny.key)


def test_a_two_worker_trial_records_the_rows_of_its_one_process_run(uninterrupted):
    spec = parse_spec(dp_raw("alone"), "alone.yaml")
    checkpoints = []
    run_trial(spec.trials[0], checkpoints.append)
    alone = {(r.samples_seen, r.metric, r.reference, r.eval_set): r.value for r in checkpoints[-1].history}
    assert alone.keys() == uninterrupted.keys()
    for key, value in alone.items():
        assert uninterrupted[key] == pytest.approx(value, abs=1e-4), key


def samples_recorded(folder: Path) -> int:
    path = folder / "orch.db"
    try:
        frame = Store.open(f"sqlite:///{path}").measurements_frame() if path.exists() else None
    except Exception:  # the driver may still be creating the store
        return 0
    return 0 if frame is None or frame.empty else int(frame.samples_seen.max())


def run_to_a_checkpoint(tmp_path: Path, name: str) -> tuple[Path, dict, object]:
    """A driver with its own local Ray, running the 2-worker trial, once its first checkpoint
    past S=0 is in the store."""
    sweep = write_sweep(tmp_path, dp_raw(name))
    env = {"ORCH_RAY_TEMP_DIR": f"/tmp/orch-ray-dp{os.getpid()}"}
    driver = start_driver(tmp_path, sweep, "--num-cpus", "2", env=env)
    wait_for(lambda: samples_recorded(tmp_path) > 0 or driver.poll() is not None)
    assert driver.poll() is None, driver.stderr.read()
    return sweep, env, driver


def finished_rows(tmp_path: Path, sweep: Path) -> tuple[dict, object]:
    spec = load_spec(sweep)
    store = Store.open(f"sqlite:///{tmp_path / 'orch.db'}")
    record = store.get_trial(spec.trials[0].key)
    assert record.status == "done"
    rows = rows_of(store, spec.name, spec.trials[0].key)
    assert len(rows) == expected_rows(spec.trials[0])
    return rows, record


def assert_same_rows(rows: dict, uninterrupted: dict) -> None:
    assert rows.keys() == uninterrupted.keys()
    for key, value in uninterrupted.items():
        assert rows[key] == pytest.approx(value, abs=1e-6), key


def test_sigkill_of_the_driver_mid_trial_then_rerun_gives_the_uninterrupted_rows(tmp_path, uninterrupted):
    sweep, env, driver = run_to_a_checkpoint(tmp_path, "killed")
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    assert samples_recorded(tmp_path) < 4000  # killed mid-trial
    rerun = start_driver(tmp_path, sweep, "--num-cpus", "2", env=env)
    _, stderr = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, stderr
    assert "resumed from its checkpoint" in stderr
    rows, _ = finished_rows(tmp_path, sweep)
    assert_same_rows(rows, uninterrupted)


KILLED = {  # what is killed mid-trial: the mark on its command line, and how many there are
    "a_worker": ("RayTrainWorker", 2),
    # The Train controller dies with its Tune trial and cannot remove its workers' placement group
    # (a whole CPU of the driver's 2): left there, the retry (0.01 + 1 CPU) could never start.
    "the_tune_trial": ("ray::ImplicitFunc", 1),
}


@pytest.mark.parametrize("victim", list(KILLED))
def test_a_process_killed_mid_trial_is_retried_from_its_checkpoint_with_rows_once(
    tmp_path, uninterrupted, victim
):
    sweep, _, driver = run_to_a_checkpoint(tmp_path, f"killed_{victim}")
    mark, count = KILLED[victim]
    descendants = psutil.Process(driver.pid).children(recursive=True)
    found = [p for p in descendants if mark in " ".join(p.cmdline())]
    assert len(found) == count
    found[-1].kill()
    _, stderr = driver.communicate(timeout=600)
    assert driver.returncode == 0, stderr
    assert "retrying after" in stderr and "resumed from its checkpoint" in stderr
    rows, record = finished_rows(tmp_path, sweep)
    assert record.attempts == 2
    assert_same_rows(rows, uninterrupted)
