"""Leases: on one store, each trial is run by one driver at a time.

A driver claims the trials it is about to run; a second driver on the same sweep skips those
under a live lease and runs the rest. A lease is live while its driver beats its heartbeat (every
`stale_s / 6`); a driver that died (SIGKILL, a lost machine) stops beating, and after `stale_s`
its trials go to the next driver that asks, which resumes them from their checkpoints: a zombie
trial is not a failure. A dead driver on this same machine is known at once by its pid.
"""

import contextlib
import os
import secrets
import socket
import threading
from collections.abc import Iterable
from types import TracebackType

import psutil

from db import Store, StoreError

__all__ = ["LEASE_STALE_S", "Heartbeat", "claim", "driver_id"]

LEASE_STALE_S = 60.0  # seconds without a heartbeat after which a lease is a dead driver's


def driver_id() -> str:
    """host:pid:token, unique to this driver run (the token outlives a reused pid)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def claim(store: Store, keys: Iterable[str], owner: str, stale_s: float = LEASE_STALE_S) -> set[str]:
    """Lease the trials of `keys` that no live driver holds to `owner`; the keys it now holds."""
    keys = list(keys)
    return store.claim(keys, owner, stale_s, dead=_dead_here(store.lease_owners(keys)))


def _dead_here(owners: Iterable[str]) -> set[str]:
    """Owners that ran on this machine and whose process is gone."""
    host = socket.gethostname()
    dead = set()
    for owner in owners:
        owner_host, _, pid = owner.rpartition(":")[0].rpartition(":")
        if owner_host == host and pid.isdigit() and not psutil.pid_exists(int(pid)):
            dead.add(owner)
    return dead


class Heartbeat:
    """Beats `owner`'s leases from a thread while the sweep runs; releases them on exit."""

    def __init__(self, store: Store, owner: str, stale_s: float = LEASE_STALE_S) -> None:
        self.store, self.owner, self.every = store, owner, stale_s / 6
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="orch-lease-heartbeat", daemon=True)

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, kind: type | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
        with contextlib.suppress(StoreError):  # an unreachable store: the leases go stale alone
            self.store.renew(self.owner, release=True)

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            with contextlib.suppress(StoreError):  # an outage: the next beat may land
                self.store.renew(self.owner)
