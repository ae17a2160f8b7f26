"""Data-parallel trials through Ray Train, with real processes: a sweep that mixes a 2-worker trial
(its workers spread over the two nodes) with a one-process trial; then one 2-worker trial whose
worker is killed mid-trial and retried from its checkpoint, whose Tune trial's own process is
killed (its workers' placement group only the driver can then release), and whose driver is
SIGKILLed and run again. It gives every row once, and the rows of the uninterrupted run."""

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import psutil
import pytest
import yaml

from db import Store
from orchestrator.run.scheduler import SweepOptions, run_sweep
from orchestrator.sweepfile import load_spec, parse_spec
from orchestrator.training.loop import run_trial
from tests.cli import orch
from tests.drivers import expected_rows, start_driver, wait_for, write_sweep

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
    fit = orch("fit", "mixed", "--store", url, "--points", "all", cwd=folder)
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
    """A driver with its own local Ray, running the 2-worker trial (its stderr in driver.log),
    once its first checkpoint past S=0 is in the store."""
    sweep = write_sweep(tmp_path, dp_raw(name))
    env = {"ORCH_RAY_TEMP_DIR": f"/tmp/orch-ray-dp{os.getpid()}"}
    driver = start_driver(tmp_path, sweep, "--num-cpus", "2", env=env, stderr=tmp_path / "driver.log")
    checkpoint_past(tmp_path, 0, driver)
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


def processes_marked(driver, mark: str) -> list[psutil.Process]:
    """The driver's live descendants whose command line holds `mark` (one that ends as it is
    read, a zombie included, is left out)."""
    found = []
    for process in psutil.Process(driver.pid).children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            if mark in " ".join(process.cmdline()):
                found.append(process)
    return found


def saved_samples(folder: Path) -> int:
    """The samples of the trial's checkpoint on disk, what a rerun resumes from (0: none, or a
    save between its two renames). The store lags it: a report reaches the driver seconds after
    its checkpoint is saved, on a loaded machine long enough for the trial to finish."""
    try:
        (meta,) = (folder / ".orch" / "checkpoints").glob("*/meta.json")
        return int(json.loads(meta.read_text())["samples_seen"])
    except (ValueError, OSError, KeyError):
        return 0


def attempts_recorded(folder: Path, key: str) -> int:
    try:
        return Store.open(f"sqlite:///{folder / 'orch.db'}").get_trial(key).attempts
    except Exception:  # the driver may be writing
        return 0


def frozen_after_its_resume(folder: Path, driver, key: str) -> tuple[int, list[psutil.Process]]:
    """The trial's processes frozen once the driver has heard the second retry resume and the
    store holds its attempt, and the samples of the checkpoint on disk then. They are frozen
    before each look and thawed after a look that finds it not yet: the trial moves on only
    while thawed, a quarter second a time."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        trial = processes_marked(driver, "RayTrainWorker") + processes_marked(driver, "ray::ImplicitFunc")
        for process in trial:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.suspend()
        heard = (folder / "driver.log").read_text().count("resumed from its checkpoint")
        if heard == 2 and attempts_recorded(folder, key) == 3 and (saved := saved_samples(folder)):
            return saved, trial
        for process in trial:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.resume()
        assert driver.poll() is None, (folder / "driver.log").read_text()[-3000:]
        time.sleep(0.25)
    raise AssertionError("the second retry did not resume in time")


def checkpoint_past(folder: Path, samples: int, driver) -> int:
    """Wait until the store holds a checkpoint past `samples` (the trial has resumed and gone
    on); its sample count."""
    wait_for(lambda: samples_recorded(folder) > samples or driver.poll() is not None)
    assert driver.poll() is None, (folder / "driver.log").read_text()[-3000:]
    return samples_recorded(folder)


def test_killed_worker_tune_trial_and_driver_each_resume_from_the_checkpoint_with_rows_once(
    tmp_path, uninterrupted
):
    """One 2-worker trial, interrupted three ways in turn, each once its last resume has checkpointed:
    a Ray Train worker SIGKILLed (a retry), the Tune trial's own process SIGKILLed (a retry: its
    Train controller dies with it and cannot remove its workers' placement group, a whole CPU of
    the driver's 2, so only the driver's release lets the retry start), then the driver SIGKILLed
    and run again. The rows are the uninterrupted run's, each once."""
    sweep, env, driver = run_to_a_checkpoint(tmp_path, "killed")
    reached = samples_recorded(tmp_path)
    for mark, count in (("RayTrainWorker", 2), ("ray::ImplicitFunc", 1)):
        found = processes_marked(driver, mark)
        assert len(found) == count, f"{mark}: {len(found)} processes, not {count}"
        found[-1].kill()
        if mark == "RayTrainWorker":  # the first retry has resumed and gone on
            reached = checkpoint_past(tmp_path, reached, driver)
    # The resumed trial's processes are frozen, then the driver killed, then they: as a machine
    # dies, all at once. Left running, they outlive a killed driver by seconds, time enough on a
    # loaded machine to finish the trial and leave the rerun nothing to resume.
    saved, trial = frozen_after_its_resume(tmp_path, driver, load_spec(sweep).trials[0].key)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    for process in trial:
        with contextlib.suppress(psutil.NoSuchProcess):  # Ray may have ended it first
            process.kill()
    killed_stderr = (tmp_path / "driver.log").read_text()
    assert saved < 4000, f"the trial ended before the driver was killed ({saved} samples)"
    assert killed_stderr.count("retrying after") == 2, "each killed process costs one retry"
    assert killed_stderr.count("resumed from its checkpoint") == 2, "each retry resumes from its checkpoint"
    rerun = start_driver(tmp_path, sweep, "--num-cpus", "2", env=env)
    _, stderr = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, stderr
    assert "resumed from its checkpoint" in stderr, "the rerun resumes the killed driver's trial"
    rows, record = finished_rows(tmp_path, sweep)
    assert record.attempts == 4, f"{record.attempts} attempts: the first, two retries and the rerun's"
    assert_same_rows(rows, uninterrupted)
