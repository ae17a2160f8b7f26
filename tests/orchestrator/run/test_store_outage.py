"""A store outage mid-sweep: a private Postgres server is crashed (SIGKILL of the postmaster and
every backend) while a real driver runs, and started again. A driver that waits too little stops
with one line; its rerun holds its rows through the next crash, retries, and the store ends with
exactly the rows of an undisturbed sweep."""

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from db import Store
from orchestrator.sweepfile import load_spec
from tests.drivers import expected_rows, start_driver, sweep_raw, wait_for, write_sweep

INITDB = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
pytestmark = [
    pytest.mark.processes,
    pytest.mark.postgres,
    pytest.mark.skipif(not INITDB or os.geteuid() != 0, reason="needs Debian's Postgres binaries and root"),
]


class PrivatePostgres:
    """A throwaway Postgres server of our own, run as the `postgres` user on a free port."""

    def __init__(self) -> None:
        self.bin = Path(INITDB[-1]).parent
        self.folder = Path(tempfile.mkdtemp(prefix="orch-pg-"))
        shutil.chown(self.folder, "postgres")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._as_postgres("initdb", "-D", str(self.folder / "data"), "--auth=trust", "-U", "postgres")
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _as_postgres(self, tool: str, *args: str) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", str(self.bin / tool), *args], check=True, capture_output=True
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1"
        self._as_postgres(
            "pg_ctl",
            "-D",
            str(self.folder / "data"),
            "-o",
            options,
            "-l",
            str(self.folder / "log"),
            "-w",
            "start",
        )

    def crash(self) -> None:
        """SIGKILL the postmaster and every backend, as a lost machine would."""
        postmaster = psutil.Process(int((self.folder / "data" / "postmaster.pid").read_text().split()[0]))
        processes = [postmaster, *postmaster.children(recursive=True)]
        for process in processes:
            process.kill()
        psutil.wait_procs(processes, timeout=10)

    def remove(self) -> None:
        subprocess.run(
            [
                "runuser",
                "-u",
                "postgres",
                "--",
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.folder / "data"),
                "-m",
                "immediate",
                "stop",
            ],
            capture_output=True,
        )
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture
def postgres():
    server = PrivatePostgres()
    server.start()
    yield server
    server.remove()


def rows_in(url: str, sweep: str) -> int:
    try:
        return len(Store.open(url).measurements_frame(sweep))
    except Exception:  # the server is down, or the driver is still creating the store
        return 0


def test_a_driver_that_waits_too_little_stops_in_one_line_and_its_rerun_waits_out_the_next_crash(
    tmp_path, postgres
):
    """Two crashes of one sweep's store: the first outlasts the driver's --store-wait 3, so it
    stops in one line; its rerun, with --store-wait 300, holds its rows through the second and
    ends with exactly the rows of an undisturbed sweep."""
    sweep = write_sweep(tmp_path, sweep_raw(name="outage", sizes=("8K",), seeds=(0, 1)))
    driver = start_driver(tmp_path, sweep, "--num-cpus", "2", "--store-wait", "3", store=postgres.url)
    wait_for(lambda: rows_in(postgres.url, "outage") > 0 or driver.poll() is not None)
    postgres.crash()
    _, stderr = driver.communicate(timeout=300)
    postgres.start()
    assert driver.returncode == 1, f"a driver that gave up on its store exits 1: {stderr[-3000:]}"
    assert "Traceback" not in stderr, stderr[-3000:]
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("orch: error: store postgresql+psycopg://postgres@127.0.0.1"), last
    assert "--store-wait 3" in last, last
    landed = rows_in(postgres.url, "outage")
    rerun = start_driver(tmp_path, sweep, "--num-cpus", "2", "--store-wait", "300", store=postgres.url)
    wait_for(lambda: rows_in(postgres.url, "outage") > landed or rerun.poll() is not None)
    postgres.crash()
    time.sleep(20)
    postgres.start()
    _, stderr = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, stderr[-3000:]
    assert "store unreachable, retrying" in stderr and "rows buffered" in stderr, "the outage is said"
    assert "store reachable again" in stderr, "and its end"
    frame = Store.open(postgres.url).measurements_frame("outage")
    assert len(frame) == sum(expected_rows(t) for t in load_spec(sweep).trials), "an undisturbed run's rows"
    assert not frame.duplicated(["trial_key", "samples_seen", "metric", "reference"]).any(), "each once"
    assert set(Store.open(postgres.url).trials_frame("outage").status) == {"done"}
