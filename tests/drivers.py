"""Sweep files, driver processes and the rows a finished trial writes: what the tests that run
real `orch sweep` drivers share."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from db import TRAINING_ROWS
from orchestrator.sweepfile.catalog import PRESETS

REFERENCES = 2  # the world's references
FINISHED = """
name: base
eval: {metrics: [mutual_knn@10], checkpoints: log2}
grid: {objective: [jepa_good, ntp], model: [tiny], data_size: [8K], seed: [0, 1]}
train: {schedule: constant, warmup: 0.0}
"""  # the session's finished sweep (tests/conftest.py `finished_sweep`)


def sweep_raw(name="s", objectives=("jepa_good", "ntp"), sizes=("2K",), seeds=(0, 1)):
    return {
        "name": name,
        "eval": {"metrics": ["mutual_knn@10"], "checkpoints": "log2"},
        "grid": {
            "objective": list(objectives),
            "model": ["tiny"],
            "data_size": list(sizes),
            "seed": list(seeds),
        },
    }


def expected_rows(trial) -> int:
    """Rows one finished trial writes: per checkpoint, each metric x reference, max and per
    layer, plus after S=0 the training rows (loss, tokens and positions per sample)."""
    schedule = trial.checkpoints
    per_metric = len(trial.eval.metrics) * REFERENCES * (1 + PRESETS[trial.model].layers)
    return sum(per_metric + (len(TRAINING_ROWS) if samples else 0) for samples in schedule)


def write_sweep(folder: Path, raw: dict) -> Path:
    path = folder / f"{raw['name']}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def start_driver(
    folder: Path,
    sweep: Path,
    *extra: str,
    env=None,
    sigint=signal.SIG_DFL,
    store: str | None = None,
    stderr: Path | None = None,
) -> subprocess.Popen:
    """A driver process (its store: `store`, or orch.db in `folder`) whose SIGINT disposition is
    set here, not inherited from how the suite was started (a background job ignores SIGINT, and
    so would every child). Its stderr goes to a pipe, or to the file `stderr` for a long run whose
    output no one reads until it ends (a full pipe would stop the driver)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "orchestrator",
            "--store",
            store or f"sqlite:///{folder / 'orch.db'}",
            "sweep",
            str(sweep),
            *extra,
        ],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if stderr is None else stderr.open("w"),
        text=True,
        env={**os.environ, **(env or {})},
        preexec_fn=lambda: signal.signal(signal.SIGINT, sigint),
    )


def wait_for(predicate, timeout=240.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError("condition not reached in time")


def run_orch(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """One `orch` command run to its end in `cwd`."""
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def copy_of(finished: Path, folder: Path) -> Path:
    """The finished sweep's file and store, copied into `folder` for a test that adds to them."""
    for name in ("base.yaml", "orch.db", "orch.db-wal"):  # the store closed, its log folded in or not
        if (finished / name).exists():
            shutil.copy2(finished / name, folder / name)
    return folder / "base.yaml"
