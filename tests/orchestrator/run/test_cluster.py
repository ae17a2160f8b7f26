"""`orch sweep --address` against a real `ray start` cluster with token authentication (the
session's: a head and a worker node, each a real process), joined with the token from
RAY_AUTH_TOKEN_PATH; refused in one line without one, or on a port nobody listens on."""

import json
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch
import yaml

from orchestrator.sweepfile import parse_spec
from orchestrator.training.loop import run_trial
from tests.rayclusters import clean_env, free_port

pytestmark = pytest.mark.processes  # real processes: run by .ci/run after the README's command

SMALL = """
name: small
data: {source: world}
eval: {metrics: [mutual_knn@10], checkpoints: log2, references: [factor_mlp]}
grid: {objective: [jepa_good, ntp], model: [tiny], data_size: [1K], seed: [0]}
train: {batch_size: 64, schedule: constant, warmup: 0.0}
"""


def orch(args: list[str], home: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "orchestrator", *args]
    return subprocess.run(
        command, capture_output=True, text=True, cwd=cwd, env=clean_env(home, **env), timeout=600
    )


def measurements(store: Path) -> list[tuple]:
    with sqlite3.connect(store) as connection:
        query = (
            "SELECT trial_key, samples_seen, metric, reference, value FROM measurements ORDER BY 1, 2, 3, 4"
        )
        return connection.execute(query).fetchall()


def run_here(sweep: str, cache: Path) -> list[tuple]:
    """The rows each trial of the sweep writes, trained in this process with one torch thread, as
    a local run's worker trains it, in the order `measurements` gives."""
    rows = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for trial in parse_spec(yaml.safe_load(sweep), "small.yaml").trials:
            saved = []
            run_trial(trial, saved.append, cache_dir=cache)
            rows += [(trial.key, r.samples_seen, r.metric, r.reference, r.value) for r in saved[-1].history]
    finally:
        torch.set_num_threads(threads)
    return sorted(rows)


def test_a_sweep_joins_a_token_cluster_and_writes_what_a_local_run_writes(ray_cluster, tmp_path):
    (tmp_path / "small.yaml").write_text(SMALL)
    joined = orch(
        [
            "--store",
            "sqlite:///cluster.db",
            "sweep",
            "small.yaml",
            "--address",
            ray_cluster.address,
            "--json",
        ],
        tmp_path / "driver_home",  # no token file here: the path names it
        tmp_path,
        RAY_AUTH_TOKEN_PATH=str(ray_cluster.token),
    )
    assert joined.returncode == 0, joined.stderr
    assert json.loads(joined.stdout)["counts"] == {"done": 2}
    rows = measurements(tmp_path / "cluster.db")
    assert len(rows) == 18, rows  # each of 2 trials: S = 0 (3 scores) and 1K (3 scores, 3 training rows)
    local = run_here(SMALL, tmp_path / "cache")
    assert [row[:4] for row in rows] == [row[:4] for row in local]
    assert [row[4] for row in rows] == pytest.approx([row[4] for row in local], abs=1e-9)
    assert "Token authentication" not in joined.stderr  # Ray's warning, silenced


def test_without_a_token_the_driver_says_so_in_one_line_and_sends_nothing(ray_cluster, tmp_path):
    address = ray_cluster.address
    (tmp_path / "small.yaml").write_text(SMALL)
    refused = orch(
        ["--store", "sqlite:///none.db", "sweep", "small.yaml", "--address", address], tmp_path, tmp_path
    )
    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert "no Ray auth token found" in line and "RAY_AUTH_TOKEN_PATH" in line
    status = orch(["--store", "sqlite:///none.db", "status", "--json"], tmp_path, tmp_path)
    assert json.loads(status.stdout)["sweeps"] == []  # no trial left pending


def sweep_with_a_3_s_timeout(address: str, folder: Path) -> tuple[str, float]:
    """Run the small sweep against `address` with --connect-timeout 3: its one error line (exit
    2 asserted) and the seconds it took."""
    (folder / "small.yaml").write_text(SMALL)
    args = [
        "--store",
        "sqlite:///x.db",
        "sweep",
        "small.yaml",
        "--address",
        address,
        "--connect-timeout",
        "3",
    ]
    started = time.monotonic()
    result = orch(args, folder, folder)
    took = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    return line, took


def test_a_port_nobody_listens_on_fails_fast_in_one_line(tmp_path):
    (tmp_path / "small.yaml").write_text(SMALL)
    address = f"127.0.0.1:{free_port()}"
    refused = orch(
        ["--store", "sqlite:///x.db", "sweep", "small.yaml", "--address", address], tmp_path, tmp_path
    )
    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith(f"orch: error: no Ray cluster answers at {address}")


def test_a_cluster_that_never_completes_the_handshake_fails_within_the_connect_timeout(tmp_path):
    """A listener whose backlog is full: the kernel drops new SYNs, as a firewalled host does."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(0)
    address = f"127.0.0.1:{silent.getsockname()[1]}"
    fillers = []
    for _ in range(4):  # fill the backlog; later connections hang
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(silent.getsockname())
        fillers.append(filler)
    line, took = sweep_with_a_3_s_timeout(address, tmp_path)
    for sock in [silent, *fillers]:
        sock.close()
    assert line.startswith(f"orch: error: no Ray cluster answers at {address} within 3 s"), line
    assert took < 15, took
    assert not (tmp_path / "x.db").exists()


def test_a_listener_that_accepts_and_never_speaks_fails_within_the_connect_timeout(tmp_path):
    """Another service on the port: the connection opens, and nothing ever answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    address = f"127.0.0.1:{listener.getsockname()[1]}"
    line, took = sweep_with_a_3_s_timeout(address, tmp_path)
    for sock in [listener, *accepted]:
        sock.close()
    assert line.startswith(
        f"orch: error: something listens at {address} but does not answer as a Ray cluster"
    )
    assert took < 3 + 5 and not (tmp_path / "x.db").exists()
