"""A worker node lost mid-trial, on a real `ray start` cluster (a head and a worker, each its own
process tree and temp dir): the worker's raylet is SIGKILLed once the trial on it has checkpointed.
The trial resumes on the head from that checkpoint, every row lands once, the attempt is counted,
and under --retries 0 the lost node costs no retry (it is preemption, not failure). The same
holds for a data-parallel trial that loses the node one of its two workers ran on."""

import json
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.spec import load_spec
from tests.drivers import expected_rows, sweep_raw, write_sweep
from tests.rayclusters import clean_env, ray_start_cluster

pytestmark = pytest.mark.processes  # real processes: run by .ci/run after the README's command

# The head notices a dead node in about 1.5 s rather than Ray's default of about 15 s.
FAST_HEALTH_CHECKS = {"RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "3"}


def trial_on(store: Path, node_id: str) -> tuple[str, int] | None:
    """(key, samples seen) of the trial whose last checkpoint came from `node_id`, if any."""
    if not store.exists():
        return None
    try:
        with sqlite3.connect(store) as connection:
            query = "SELECT key, samples_seen FROM trials WHERE host LIKE ? AND samples_seen > 0"
            return connection.execute(query, (f"%/{node_id[:8]}",)).fetchone()
    except sqlite3.OperationalError:  # the driver is still creating the store
        return None


def test_a_trial_on_a_lost_node_resumes_on_a_live_one_without_using_a_retry(tmp_path):
    sweep = write_sweep(tmp_path, sweep_raw(name="lost", sizes=("8K",), seeds=(0,)))
    store = tmp_path / "orch.db"
    with ray_start_cluster(tmp_path / "home", head_env=FAST_HEALTH_CHECKS) as cluster:
        worker, head = cluster.node_id(cluster.worker_dir), cluster.node_id(cluster.head_dir)
        command = [sys.executable, "-m", "orchestrator", "--store", f"sqlite:///{store}", "sweep", str(sweep)]
        command += ["--address", cluster.address, "--retries", "0", "--json"]
        command += ["--storage", f"file://{tmp_path / 'shared'}"]  # what every node mounts on a cluster
        env = clean_env(tmp_path / "driver_home", RAY_AUTH_TOKEN_PATH=str(cluster.token))
        pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
        driver = subprocess.Popen(command, cwd=tmp_path, env=env, **pipes)
        deadline = time.monotonic() + 180
        while (running := trial_on(store, worker)) is None and driver.poll() is None:
            assert time.monotonic() < deadline, "no trial checkpointed on the worker node"
            time.sleep(0.2)
        assert running is not None, driver.communicate()[1].decode()[-3000:]
        cluster.raylet(cluster.worker_dir).kill()
        stdout, stderr = (text.decode() for text in driver.communicate(timeout=400))
    assert driver.returncode == 0, stderr[-3000:]
    assert json.loads(stdout)["counts"] == {"done": 2}  # stdout is the JSON alone, Ray's notes on stderr
    key, killed_at = running
    with sqlite3.connect(store) as connection:
        query = "SELECT attempts, host FROM trials WHERE key = ?"
        attempts, host = connection.execute(query, (key,)).fetchone()
        rows = connection.execute(
            "SELECT COUNT(*), COUNT(DISTINCT samples_seen || metric || reference || eval_set) "
            "FROM measurements WHERE trial_key = ?",
            (key,),
        ).fetchone()
    assert attempts == 2 and host.endswith(f"/{head[:8]}")  # the second attempt ran on the head
    assert (tmp_path / "shared" / "checkpoints" / key / "meta.json").exists()
    (trial,) = [t for t in load_spec(sweep).trials if t.key == key]
    assert rows == (expected_rows(trial), expected_rows(trial))  # every row, each once
    label = key[:10]
    not_counted = "resuming on a live node, not counted as a retry"
    lost = re.search(rf"{label} .*: node lost \(.*\); {not_counted}", stderr)
    assert lost, stderr[-3000:]
    resumed = re.search(rf"{label} .*: resumed from its checkpoint at ([\d,]+) samples", stderr)
    assert resumed and int(resumed.group(1).replace(",", "")) >= killed_at  # not from step 0


def test_a_data_parallel_trial_that_loses_a_workers_node_resumes_without_using_a_retry(tmp_path):
    """Its two workers spread over the head and the worker node; the worker node's raylet dies."""
    raw = sweep_raw(name="lost_dp", objectives=("jepa_good",), sizes=("8K",), seeds=(0,))
    raw["resources"] = {"cpu": 0.4, "workers": 2, "placement": "spread"}
    sweep = write_sweep(tmp_path, raw)
    store = tmp_path / "orch.db"
    with ray_start_cluster(tmp_path / "home", head_env=FAST_HEALTH_CHECKS) as cluster:
        command = [sys.executable, "-m", "orchestrator", "--store", f"sqlite:///{store}", "sweep", str(sweep)]
        command += ["--address", cluster.address, "--retries", "0", "--json"]
        command += ["--storage", f"file://{tmp_path / 'shared'}"]
        env = clean_env(tmp_path / "driver_home", RAY_AUTH_TOKEN_PATH=str(cluster.token))
        driver = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 180
        while (running := checkpointed(store)) is None and driver.poll() is None:
            assert time.monotonic() < deadline, "the trial did not checkpoint"
            time.sleep(0.2)
        assert running is not None, driver.communicate()[1].decode()[-3000:]
        cluster.raylet(cluster.worker_dir).kill()
        stdout, stderr = (text.decode() for text in driver.communicate(timeout=400))
    assert driver.returncode == 0, stderr[-3000:]
    assert json.loads(stdout)["counts"] == {"done": 1}
    (trial,) = load_spec(sweep).trials
    with sqlite3.connect(store) as connection:
        (attempts,) = connection.execute("SELECT attempts FROM trials WHERE key = ?", (trial.key,)).fetchone()
        rows = connection.execute(
            "SELECT COUNT(*), COUNT(DISTINCT samples_seen || metric || reference || eval_set) "
            "FROM measurements WHERE trial_key = ?",
            (trial.key,),
        ).fetchone()
    assert attempts == 2 and rows == (expected_rows(trial), expected_rows(trial))
    label = trial.key[:10]
    assert re.search(rf"{label} .*: node lost \(.*; resuming on a live node, not counted as a retry", stderr)
    resumed = re.search(rf"{label} .*: resumed from its checkpoint at ([\d,]+) samples", stderr)
    assert resumed and int(resumed.group(1).replace(",", "")) >= running[1], stderr[-3000:]


def checkpointed(store: Path) -> tuple[str, int] | None:
    if not store.exists():
        return None
    try:
        with sqlite3.connect(store) as connection:
            return connection.execute(
                "SELECT key, samples_seen FROM trials WHERE samples_seen > 0"
            ).fetchone()
    except sqlite3.OperationalError:
        return None
