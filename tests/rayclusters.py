"""Real multi-process Ray clusters for the tests: `ray start --head` and one worker node on this
machine, each with its own temp dir and 1 CPU, token-authenticated, stopped by their PIDs."""

import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

RAY = str(Path(sys.executable).with_name("ray"))
RUN = {"check": True, "capture_output": True, "timeout": 120}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a plain shell whose home is `home`: no Ray settings inherited."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_", "ORCH_"))}
    return env | {"HOME": str(home)} | extra


@dataclass(frozen=True)
class RayCluster:
    address: str
    token: Path  # the head's auth token file
    head_dir: str
    worker_dir: str

    @property
    def env(self) -> dict[str, str]:
        """What a driver process adds to its environment to join with the head's token."""
        return {"RAY_AUTH_TOKEN_PATH": str(self.token)}

    def processes(self) -> list[psutil.Process]:
        """Every process of the cluster: a temp dir or the GCS address is on its command line."""
        marks = (self.head_dir, self.worker_dir, self.address)
        found = []
        for process in psutil.process_iter(["cmdline"]):
            line = " ".join(process.info["cmdline"] or [])
            if any(mark in line for mark in marks) and process.pid != os.getpid():
                found.append(process)
        return found

    def raylet(self, temp_dir: str) -> psutil.Process:
        """The raylet of the node started with `temp_dir`."""
        for process in self.processes():
            line = process.info["cmdline"] or []
            if line and line[0].endswith("/raylet") and any(temp_dir in part for part in line):
                return process
        raise LookupError(f"no raylet under {temp_dir}")

    def node_id(self, temp_dir: str) -> str:
        """The Ray node ID of the node started with `temp_dir`, from its raylet's arguments."""
        arguments = self.raylet(temp_dir).info["cmdline"]
        (node,) = [a.split("=", 1)[1] for a in arguments if a.startswith("--node_id=")]
        return node


@contextmanager
def ray_start_cluster(home: Path, head_env: dict[str, str] | None = None) -> Iterator[RayCluster]:
    """A head (`head_env` added to its environment, e.g. Ray system settings) and one worker."""
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = clean_env(home)
    cluster = RayCluster(
        f"127.0.0.1:{port}",
        home / ".ray" / "auth_token",
        tempfile.mkdtemp(prefix="orch-rh-", dir="/tmp"),  # short: Ray's socket paths
        tempfile.mkdtemp(prefix="orch-rw-", dir="/tmp"),
    )
    subprocess.run([RAY, "get-auth-token", "--generate"], env=env, **RUN)
    common = ["--num-cpus=1", "--disable-usage-stats"]
    head = [RAY, "start", "--head", f"--port={port}", "--include-dashboard=false", *common]
    head.append(f"--temp-dir={cluster.head_dir}")
    worker = [RAY, "start", f"--address={cluster.address}", f"--temp-dir={cluster.worker_dir}", *common]
    try:
        head_run = env | (head_env or {})
        subprocess.run(head, env=head_run, **RUN)
        # Ray's own CLI joins a token cluster only in token mode, as the README says.
        worker_run = env | {"RAY_AUTH_MODE": "token"}
        subprocess.run(worker, env=worker_run, **RUN)
        yield cluster
    finally:
        processes = cluster.processes()
        for process in processes:
            process.kill()
        psutil.wait_procs(processes, timeout=30)
        assert not cluster.processes()
