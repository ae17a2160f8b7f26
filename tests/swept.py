"""A store as the current code writes it: a real 2-trial world sweep (`orch sweep` in a process of
its own: real Ray Tune trials, real training, every row kind a trial writes), run once per test
run and copied for each test that reads a store's content (export, import, the report, the
watch, the trackers), so no such test reads rows written by hand.

The README's test command starts it as the session starts, beside the first tests, at a higher
CPU priority where it may take one (Ray's dozen processes beside two busy workers took from 20 s
to 140 s at the same priority), and runs the tests that read it last (`tests/conftest.py`); any
other run builds it when a test first asks. Under pytest-xdist the workers share one build:
whoever builds holds a file lock in the run's base folder; the others wait on the lock and copy
what it left.
"""

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

__all__ = ["SWEEP", "SWEPT", "build_swept", "copy_swept"]

SWEPT = """
name: swept
eval: {metrics: [mutual_knn@10], checkpoints: log2}
grid: {objective: [jepa_good, ntp], model: [tiny], data_size: [1K], seed: [0]}
train: {schedule: constant, warmup: 0.0}
claims:
  - {id: good_first, kind: gap, faster: jepa_good, slower: ntp, at_least: 1,
     says: JEPA on good views reaches NTP's alignment with fewer samples, source: a test}
"""
SWEEP = "swept"  # its name in the store
STORE_FILES = ("swept.yaml", "orch.db", "orch.db-wal")
TIMEOUT_S = 300  # about 15 s on an idle 2-core machine


def build_swept(base: Path) -> Path:
    """The folder holding the sweep's file and its finished store, built on first call of the
    test run (`base`: a folder every worker of the run shares)."""
    folder = base / "swept"
    with (base / "swept.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "done").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            (folder / "swept.yaml").write_text(yaml.safe_dump(yaml.safe_load(SWEPT), sort_keys=False))
            command = [sys.executable, "-m", "orchestrator", "--store", "sqlite:///orch.db"]
            sweep = ["sweep", "swept.yaml", "--num-cpus", "1"]  # one process runs both trials, packed
            # its output to a file, not a pipe: Ray's daemons inherit a pipe and may outlive the driver
            with (folder / "sweep.log").open("w") as log:
                code = subprocess.run(
                    [*command, *sweep],
                    cwd=folder,
                    stdout=log,
                    stderr=log,
                    timeout=TIMEOUT_S,
                    preexec_fn=_ahead_of_the_tests,
                ).returncode
            if code != 0:
                raise RuntimeError(
                    f"the swept store's sweep failed:\n{(folder / 'sweep.log').read_text()[-3000:]}"
                )
            (folder / "done").touch()
    return folder


def _ahead_of_the_tests() -> None:
    """A higher CPU priority for the sweep and its Ray, where this user may raise one."""
    with contextlib.suppress(PermissionError):
        os.nice(-10)


def copy_swept(built: Path, folder: Path) -> str:
    """The swept store copied into `folder` (with its sweep file); its URL."""
    for name in STORE_FILES:
        if (built / name).exists():
            shutil.copy2(built / name, folder / name)
    return f"sqlite:///{folder / 'orch.db'}"
