"""No silent minute: a command that works longer than HEARTBEAT_S without a line on stderr says
what it is doing (its imports, the fit, the planner), and again every HEARTBEAT_S it stays quiet.

A command wraps itself in `working`; it names each long step with `doing`, and every line it
says through `orchestrator.cli.common.say` resets the clock (`note_said`).
"""

import functools
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import click

__all__ = ["HEARTBEAT_S", "doing", "note_said", "working"]

HEARTBEAT_S = 5.0
F = TypeVar("F", bound=Callable[..., Any])


class _Heartbeat:
    def __init__(self, what: str) -> None:
        self.what, self.started = what, time.monotonic()
        self.last = self.started
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="orch-heartbeat", daemon=True)

    def _beat(self) -> None:
        while not self._stop.wait(min(0.25, HEARTBEAT_S / 2)):
            now = time.monotonic()
            if now - self.last >= HEARTBEAT_S:
                self.last = now
                click.echo(f"orch: {self.what} ({now - self.started:.0f} s so far)", err=True)

    def __enter__(self) -> "_Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


_current: _Heartbeat | None = None


def working(command: F) -> F:
    """Run the command with a heartbeat ('orch next: loading its libraries (5 s so far)' until
    the command names its step)."""

    @functools.wraps(command)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        global _current
        context = click.get_current_context(silent=True)
        name = context.command_path if context is not None else command.__name__
        with _Heartbeat(f"{name}: loading its libraries") as beat:
            _current = beat
            try:
                return command(*args, **kwargs)
            finally:
                _current = None

    return wrapped  # type: ignore[return-value]


def doing(what: str) -> None:
    """Name the step the command is in, for its next heartbeat."""
    if _current is not None:
        _current.what = what


def note_said() -> None:
    """A line was said: the next heartbeat waits HEARTBEAT_S from now."""
    if _current is not None:
        _current.last = time.monotonic()
