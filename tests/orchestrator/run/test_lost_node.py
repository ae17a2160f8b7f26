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
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.sweepfile import load_spec
from tests.drivers import expected_rows, sweep_raw, write_sweep
from tests.rayclusters import RayCluster, clean_env, ray_start_cluster

pytestmark = pytest.mark.processes  # real processes: run by .ci/run after the README's command

# The head notices a dead node in about 1.5 s rather than Ray's default of about 15 s.
FAST_HEALTH_CHECKS = {"RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "3"}


Running = tuple[str, int]  # (key, samples seen) of a trial with a checkpoint


def trial_on(store: Path, node_id: str | None = None) -> Running | None:
    """The trial whose last checkpoint came from `node_id` (any node when None), if any."""
    if not store.exists():
        return None
    try:
        with sqlite3.connect(store) as connection:
            query = "SELECT key, samples_seen FROM trials WHERE host LIKE ? AND samples_seen > 0"
            return connection.execute(query, (f"%/{node_id[:8]}" if node_id else "%",)).fetchone()
    except sqlite3.OperationalError:  # the driver is still creating the store
        return None


def lose_the_worker_node(
    tmp_path: Path, sweep: Path, cluster: RayCluster, running: Callable[[Path], Running | None]
) -> tuple[Running, str, str]:
    """Drive `sweep` on `cluster` under --retries 0 and SIGKILL the worker node's raylet once
    `running(store)` names a trial; that trial, and the driver's stdout and stderr once it ends
    (exit code 0)."""
    store = tmp_path / "orch.db"
    command = [sys.executable, "-m", "orchestrator", "--store", f"sqlite:///{store}", "sweep", str(sweep)]
    command += ["--address", cluster.address, "--retries", "0", "--json"]
    command += ["--storage", f"file://{tmp_path / 'shared'}"]  # what every node mounts on a cluster
    env = clean_env(tmp_path / "driver_home", RAY_AUTH_TOKEN_PATH=str(cluster.token))
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    driver = subprocess.Popen(command, cwd=tmp_path, env=env, **pipes)
    deadline = time.monotonic() + 180
    while (trial := running(store)) is None and driver.poll() is None:
        assert time.monotonic() < deadline, "no trial checkpointed where it should"
        time.sleep(0.2)
    assert trial is not None, driver.communicate()[1].decode()[-3000:]
    cluster.raylet(cluster.worker_dir).kill()
    stdout, stderr = (text.decode() for text in driver.communicate(timeout=400))
    assert driver.returncode == 0, stderr[-3000:]
    return trial, stdout, stderr


def attempts_and_rows(store: Path, key: str) -> tuple[int, str, tuple[int, int]]:
    """The trial's attempts, its host, and (its rows, its distinct rows)."""
    with sqlite3.connect(store) as connection:
        attempts, host = connection.execute(
            "SELECT attempts, host FROM trials WHERE key = ?", (key,)
        ).fetchone()
        rows = connection.execute(
            "SELECT COUNT(*), COUNT(DISTINCT samples_seen || metric || reference || eval_set) "
            "FROM measurements WHERE trial_key = ?",
            (key,),
        ).fetchone()
    return attempts, host, rows


def assert_resumed_without_a_retry(stderr: str, key: str, killed_at: int) -> None:
    label = key[:10]
    not_counted = "resuming on a live node, not counted as a retry"
    assert re.search(rf"{label} .*: node lost \(.*\); {not_counted}", stderr), stderr[-3000:]
    resumed = re.search(rf"{label} .*: resumed from its checkpoint at ([\d,]+) samples", stderr)
    assert resumed and int(resumed.group(1).replace(",", "")) >= killed_at, stderr[-3000:]  # not from 0


def test_a_trial_on_a_lost_node_resumes_on_a_live_one_without_using_a_retry(tmp_path):
    sweep = write_sweep(tmp_path, sweep_raw(name="lost", sizes=("8K",), seeds=(0,)))
    with ray_start_cluster(tmp_path / "home", head_env=FAST_HEALTH_CHECKS) as cluster:
        worker, head = cluster.node_id(cluster.worker_dir), cluster.node_id(cluster.head_dir)
        (key, killed_at), stdout, stderr = lose_the_worker_node(
            tmp_path, sweep, cluster, lambda store: trial_on(store, worker)
        )
    assert json.loads(stdout)["counts"] == {"done": 2}  # stdout is the JSON alone, Ray's notes on stderr
    attempts, host, rows = attempts_and_rows(tmp_path / "orch.db", key)
    assert attempts == 2 and host.endswith(f"/{head[:8]}")  # the second attempt ran on the head
    assert (tmp_path / "shared" / "checkpoints" / key / "meta.json").exists()
    (trial,) = [t for t in load_spec(sweep).trials if t.key == key]
    assert rows == (expected_rows(trial), expected_rows(trial))  # every row, each once
    assert_resumed_without_a_retry(stderr, key, killed_at)


def test_a_data_parallel_trial_that_loses_a_workers_node_resumes_without_using_a_retry(tmp_path):
    """Its two workers spread over the head and the worker node; the worker node's raylet dies.
    Where the Tune trial itself ran there, its workers' placement group is left behind by Ray
    Train: the driver must release it, or the resumed trial waits forever for its CPUs."""
    raw = sweep_raw(name="lost_dp", objectives=("jepa_good",), sizes=("8K",), seeds=(0,))
    raw["resources"] = {"cpu": 0.4, "workers": 2, "placement": "spread"}
    sweep = write_sweep(tmp_path, raw)
    with ray_start_cluster(tmp_path / "home", head_env=FAST_HEALTH_CHECKS) as cluster:
        (key, killed_at), stdout, stderr = lose_the_worker_node(tmp_path, sweep, cluster, trial_on)
    assert json.loads(stdout)["counts"] == {"done": 1}
    (trial,) = load_spec(sweep).trials
    attempts, _, rows = attempts_and_rows(tmp_path / "orch.db", key)
    assert attempts == 2 and rows == (expected_rows(trial), expected_rows(trial))
    assert_resumed_without_a_retry(stderr, key, killed_at)
