"""Waits on the store, said out loud: a statement that has not returned after NOTICE_S (another
process holds a lock, or the server is slow) is named through `notify`, and again every NOTICE_S,
until it returns or its bound (`LOCK_WAIT_S`, SQLite's busy timeout and Postgres's lock_timeout)
ends it with one line. One watcher thread per engine wakes once a second; without a `notify`
there is none."""

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, event

from foundation.errors import InputError

__all__ = ["LOCK_WAIT_S", "NOTICE_S", "Notify", "busy_notice", "lock_wait_s", "watch_waits"]

NOTICE_S = 5.0  # a statement waiting this long is said, and again every NOTICE_S
LOCK_WAIT_S = 60.0  # the longest a statement waits for another process's lock (ORCH_LOCK_WAIT_S)
Notify = Callable[[str], None] | None  # where a long wait is said (the CLI: stderr); None: nowhere


def lock_wait_s() -> float:
    """How long a statement waits for a lock: LOCK_WAIT_S, or ORCH_LOCK_WAIT_S seconds."""
    raw = os.environ.get("ORCH_LOCK_WAIT_S")
    if raw is None:
        return LOCK_WAIT_S
    try:
        seconds = float(raw)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < 86_400:
        raise InputError(f"ORCH_LOCK_WAIT_S={raw!r}: give the seconds a lock is waited for (default 60)")
    return seconds


def busy_notice(url: str, waited: float) -> str:
    return (
        f"store {url} busy, waiting: {waited:.0f} s so far (another process holds a lock, or the "
        f"server is slow); at most {lock_wait_s():g} s for a lock"
    )


class _Watcher:
    def __init__(self, url: str, notify: Callable[[str], None]) -> None:
        self.url, self.notify = url, notify
        self.waiting: dict[int, float] = {}  # connection id -> when its statement started
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def started(self, connection: Any, *_: Any) -> None:
        with self.lock:
            self.waiting[id(connection)] = time.monotonic()
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="orch-store-waits", daemon=True)
                self.thread.start()

    def returned(self, connection: Any, *_: Any) -> None:
        with self.lock:
            self.waiting.pop(id(connection), None)

    def _run(self) -> None:
        said: dict[int, float] = {}  # connection id -> the wait last said
        while True:
            time.sleep(1.0)
            now = time.monotonic()
            with self.lock:
                waits = {key: now - since for key, since in self.waiting.items()}
            said = {key: value for key, value in said.items() if key in waits}
            for key, waited in waits.items():
                if waited >= NOTICE_S and waited - said.get(key, 0.0) >= NOTICE_S:
                    said[key] = waited
                    self.notify(busy_notice(self.url, waited))


def watch_waits(engine: Engine, url: str, notify: Notify) -> None:
    """Say every statement of `engine` that waits NOTICE_S or longer (nothing without `notify`)."""
    if notify is None:
        return
    watcher = _Watcher(url, notify)
    event.listen(engine, "connect", watcher.started, insert=True)  # SQLite's pragmas wait for locks too
    event.listen(engine, "connect", watcher.returned)
    event.listen(engine, "before_cursor_execute", watcher.started)
    event.listen(engine, "after_cursor_execute", watcher.returned)
    event.listen(engine, "handle_error", lambda context: watcher.returned(context.connection))
