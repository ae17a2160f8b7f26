"""The driver's writes to the store, in order, batched, waited out through an outage.

Every trial event becomes one pending write. Pending writes go to the store together, in one
transaction, once the oldest has waited `BATCH_S` (Tune's loop offers a flush every 0.1 s), so a
sweep of many short trials does not pay a commit per event. A batch that finds the store
unreachable stays in memory with everything after it, and is tried again with backoff (1 s
doubling to 30 s) for up to `wait_s`; then the sweep stops with one line. Nothing is lost by
giving up: a rerun re-reports every row from the trials' checkpoints, and trials still marked
running are resumed.
"""

import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from db import CheckpointReport, Store, StoreError, StoreUnreachable, TrialStatus, mask_url

__all__ = ["STORE_WAIT_S", "StoreGaveUp", "StoreWriter"]

STORE_WAIT_S = 600.0  # `orch sweep --store-wait`: how long an unreachable store is waited for
FIRST_DELAY_S, MAX_DELAY_S = 1.0, 30.0
BATCH_S = 0.25  # the longest a write waits for others to share its transaction


class StoreGaveUp(StoreError):
    """The store stayed unreachable for longer than the sweep's `--store-wait`."""


@dataclass(frozen=True)
class _Write:
    apply: Callable[[Store], object]
    rows: int  # measurement rows it carries, for the progress line


class StoreWriter:
    """Writes each event to the store, in order; holds the URL and opens the engine lazily, in
    the driver, on first use. `notify` receives the outage's progress lines."""

    def __init__(
        self, url: str, wait_s: float = STORE_WAIT_S, notify: Callable[[str], None] | None = None
    ) -> None:
        self.url = url
        self.wait_s = wait_s
        self.notify = notify or (lambda text: None)
        self._store: Store | None = None
        # Raised from a Tune callback, Tune wraps it in its own error: the driver reads it here.
        self.gave_up: StoreGaveUp | None = None
        self._pending: deque[_Write] = deque()
        self._oldest = 0.0  # when the oldest pending write was sent
        self._down_since: float | None = None
        self._next_try = 0.0
        self._delay = FIRST_DELAY_S

    def __getstate__(self) -> dict:
        # Tune pickles its callbacks into the experiment files it writes to disk; the copy
        # keeps the masked URL only, so no password reaches a file (the live writer keeps it).
        return {"url": mask_url(self.url), "wait_s": self.wait_s}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["url"], state["wait_s"])

    @property
    def buffered_rows(self) -> int:
        return sum(write.rows for write in self._pending)

    def started(self, key: str) -> None:
        host = socket.gethostname()
        self._send(_Write(lambda store: store.set_status(key, TrialStatus.RUNNING, host=host), 0))

    def checkpoint(self, report: CheckpointReport) -> None:
        self._send(_Write(lambda store: store.record_checkpoint(report), len(report.rows)))

    def retried(self, key: str, reason: str) -> None:
        self._send(_Write(lambda store: store.note(key, reason), 0))  # the next start counts the attempt

    def finished(self, key: str, status: TrialStatus, reason: str | None) -> None:
        self._send(_Write(lambda store: store.set_status(key, status, reason=reason), 0))

    def flush(self, force: bool = False) -> None:
        """Write what is pending, in one transaction, once the oldest write has waited `BATCH_S`
        (at once when `force`), unless an outage's backoff says to wait; raise StoreGaveUp once
        the store has been unreachable for longer than `wait_s`."""
        now = time.monotonic()
        if not self._pending or (self._down_since is not None and now < self._next_try):
            return
        if self._down_since is None and not force and now - self._oldest < BATCH_S:
            return
        try:
            store = self._open()
            with store.batch():
                for write in self._pending:
                    write.apply(store)
        except StoreUnreachable as error:
            self._outage(error)
            return
        self._pending.clear()
        if self._down_since is not None:
            self.notify(
                f"store reachable again after {time.monotonic() - self._down_since:.0f} s; buffer written"
            )
            self._down_since, self._delay = None, FIRST_DELAY_S

    def drain(self) -> None:
        """Flush until nothing is pending (the sweep's end), waiting out an outage as `flush` does."""
        while self._pending:
            self.flush(force=True)
            if self._pending:
                time.sleep(max(0.0, self._next_try - time.monotonic()))

    def close(self) -> None:
        """Dispose of the engine this writer opened (the sweep is over)."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def _send(self, write: _Write) -> None:
        if not self._pending:
            self._oldest = time.monotonic()
        self._pending.append(write)
        self.flush()

    def _open(self) -> Store:
        if self._store is None:
            self._store = Store.open(self.url, notify=self.notify)
        return self._store

    def _outage(self, error: StoreUnreachable) -> None:
        now = time.monotonic()
        if self._down_since is None:
            self._down_since = now
        if now - self._down_since > self.wait_s:
            self.gave_up = StoreGaveUp(
                f"{error}; unreachable for {now - self._down_since:.0f} s (--store-wait {self.wait_s:g}), "
                f"{self.buffered_rows} rows not written; rerun the same command when the store is back "
                "(every row is re-reported from the checkpoints)"
            )
            raise self.gave_up from None
        self.notify(
            f"store unreachable, retrying in {self._delay:.0f} s ({self.buffered_rows} rows buffered)"
        )
        self._next_try = now + self._delay
        self._delay = min(self._delay * 2, MAX_DELAY_S)
