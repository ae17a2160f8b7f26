"""Connecting the driver to an existing Ray cluster (`orch sweep --address`).

The Ray in our constraints starts clusters with token authentication when the head has a token,
and a driver started from a plain shell runs with authentication disabled, so it is turned away.
orch finds the token the way Ray's own processes do (`RAY_AUTH_TOKEN`, `RAY_AUTH_TOKEN_PATH`,
`~/.ray/auth_token`) and, unless `RAY_AUTH_MODE` says otherwise, asks the cluster first: a short
join without a token in a child process. A cluster that lets it in runs without authentication
(a driver in token mode would join it, but its trials would never start); one that does not gets
the token. Every way a connection fails (no token, a wrong one, a
port nobody listens on, a cluster that is down) is one `ClusterError` line, raised before
anything is written to the store.
"""

import logging
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from orchestrator.errors import InputError

__all__ = ["CONNECT_TIMEOUT_S", "ClusterError", "check_reachable", "connect", "token_source"]

CONNECT_TIMEOUT_S = 15.0
AUTH_MODE = "RAY_AUTH_MODE"


class ClusterError(InputError):
    """A Ray cluster the driver cannot reach or is not let into (exit 2, nothing written)."""


def token_source() -> str | None:
    """Where a Ray auth token is, as the user would name it; None when there is none."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "RAY_AUTH_TOKEN"
    path = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if path and Path(path).expanduser().is_file():
        return f"RAY_AUTH_TOKEN_PATH={path}"
    default = Path.home() / ".ray" / "auth_token"
    return str(default) if default.is_file() else None


# HTTP/2's client preface and an empty SETTINGS frame: a Ray head's GCS (a gRPC server) answers
# them with a SETTINGS frame of its own at once; a service that never speaks does not.
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
SETTINGS_FRAME = 4


def check_reachable(address: str, timeout_s: float) -> None:
    """A TCP connection to HOST:PORT that answers as a gRPC server (a Ray head's GCS) within the
    timeout, or a ClusterError naming the address: a port nobody listens on, or a listener that
    accepts and never speaks (another service on that port), fails here instead of hanging Ray."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterError(f"--address {address!r} is not HOST:PORT or auto (e.g. 127.0.0.1:6379)")
    try:
        connection = socket.create_connection((host, int(port)), timeout=timeout_s)
    except OSError as error:
        raise ClusterError(
            f"no Ray cluster answers at {address} within {timeout_s:g} s ({error.strerror or error}); "
            "start it with 'ray start --head --port PORT' or fix --address"
        ) from None
    try:
        with connection:
            connection.sendall(HTTP2_PREFACE)
            header = connection.recv(9)
    except OSError:  # a timeout, or a service that hung up
        raise ClusterError(
            f"something listens at {address} but does not answer as a Ray cluster within {timeout_s:g} s "
            "(another service on that port?); check --address ('ray status' on the head prints it)"
        ) from None
    if len(header) < 4 or header[3] != SETTINGS_FRAME:
        raise ClusterError(
            f"the service at {address} is not a Ray cluster (it does not speak gRPC); "
            "check --address ('ray status' on the head prints it)"
        )


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Ray's C++ client logs each retry of a refused connection on file descriptor 2; while the
    driver joins, that goes nowhere (a failure is reported as one line of ours)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as sink:
        os.dup2(sink.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


PROBE = "import logging, sys, ray; ray.init(address=sys.argv[1], logging_level=logging.ERROR)"
PROBE_TIMEOUT_S = 10.0  # a join takes about 2 s; a refused one retries for 20 s


def _needs_token(address: str) -> bool:
    """Whether the cluster turns away a driver without a token (a child process tries)."""
    env = os.environ | {AUTH_MODE: "disabled"}
    try:
        joined = subprocess.run(
            [sys.executable, "-c", PROBE, address], env=env, capture_output=True, timeout=PROBE_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return True
    return joined.returncode != 0


def connect(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> bool:
    """`ray.init(address=...)` with the cluster's auth token when it needs one; False when this
    process is already connected to a Ray."""
    if address != "auto":
        check_reachable(address, timeout_s)
    source = token_source()
    if source is not None and AUTH_MODE not in os.environ and _needs_token(address):
        os.environ[AUTH_MODE] = "token"  # read when Ray starts the driver's core worker
    import ray

    if ray.is_initialized():
        return False
    try:
        with _quiet_stderr():
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
        return True
    except Exception as error:  # Ray raises ConnectionError, AuthenticationError, RuntimeError...
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if source is None:
            raise ClusterError(
                f"cannot join the Ray cluster at {address} ({reason}): no Ray auth token found; "
                "copy the head's ~/.ray/auth_token to this machine, or set RAY_AUTH_TOKEN or "
                "RAY_AUTH_TOKEN_PATH"
            ) from None
        raise ClusterError(
            f"cannot join the Ray cluster at {address} with the token from {source} ({reason}); "
            "check that it is the head's token ('ray get-auth-token' on the head prints it)"
        ) from None
