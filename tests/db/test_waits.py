"""No silent waits on the store: a SQLite store locked by another process is said within 5 s
and again every 5 s, and the command stops after its bound with one line; the fit leaves no
report and no rows."""

import os
import subprocess
import sys
import time

import pytest

from db import Store
from tests.stores import simulated_store

pytestmark = pytest.mark.processes  # a real lock holder and a real `orch`

HOLD = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
time.sleep(60)
"""


def test_a_locked_store_is_said_within_five_seconds_and_given_up_on_at_its_bound(tmp_path):
    path = tmp_path / "orch.db"
    simulated_store(f"sqlite:///{path}").close()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        fit = subprocess.Popen(
            [sys.executable, "-m", "orchestrator", "--store", f"sqlite:///{path}", "fit", "--out", "reports"],
            cwd=tmp_path,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "ORCH_LOCK_WAIT_S": "12"},
        )
        said: list[tuple[float, str]] = []
        for line in fit.stderr:
            said.append((time.monotonic(), line.strip()))
        fit.wait(timeout=120)
    finally:
        holder.kill()
    busy = [(when, line) for when, line in said if "busy, waiting" in line]
    assert len(busy) >= 2, said  # within 5 s of the write's start, and again 5 s later
    assert busy[1][0] - busy[0][0] == pytest.approx(5, abs=1.5)
    assert "at most 12 s for a lock" in busy[0][1]
    assert fit.returncode == 1 and said[-1][1].startswith("orch: error: store sqlite:///")
    assert "locked by another process for more than 12 s" in said[-1][1]
    assert not (tmp_path / "reports").exists()
    assert Store.open(f"sqlite:///{path}", create=False).table_frame("forecasts", "sim").empty


def test_a_bad_lock_wait_is_one_line(tmp_path):
    simulated_store(f"sqlite:///{tmp_path / 'orch.db'}").close()
    result = subprocess.run(
        [sys.executable, "-m", "orchestrator", "--store", f"sqlite:///{tmp_path / 'orch.db'}", "status"],
        capture_output=True,
        text=True,
        env={**os.environ, "ORCH_LOCK_WAIT_S": "soon"},
    )
    assert result.returncode == 2 and result.stderr.strip() == (
        "orch: error: ORCH_LOCK_WAIT_S='soon': give the seconds a lock is waited for (default 60)"
    )


HOLD_READS = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA locking_mode=EXCLUSIVE")  # in WAL mode, the one lock readers wait on
connection.execute("BEGIN EXCLUSIVE")
connection.execute("SELECT count(*) FROM trials")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
connection.execute("COMMIT")
connection.close()
"""


def test_a_watch_started_on_a_locked_store_says_so_and_draws_once_the_lock_ends(tmp_path):
    path = tmp_path / "orch.db"
    simulated_store(f"sqlite:///{path}").close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_READS, str(path), "9"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        watch = subprocess.run(
            [
                sys.executable,
                "-m",
                "orchestrator",
                "--store",
                f"sqlite:///{path}",
                "status",
                "--watch",
                "--every",
                "1",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        took = time.monotonic() - started
    finally:
        holder.kill()
    assert watch.returncode == 0, watch.stderr
    assert "busy, waiting: 5 s so far" in watch.stderr  # said while the lock was held
    assert "sweep sim: 48 trials (48 done)" in watch.stdout  # drawn once it ended
    assert took < 9 + 30  # not waiting out the bound (60 s) after the lock ended
