"""SIGTERM handled like Ctrl-C, and the few steps a signal may not cut in two.

A command that writes (a sweep, a fit run and its report, an export) turns SIGTERM into a
KeyboardInterrupt, so that `kill PID` and Ctrl-C both unwind through its cleanup and end in exit
130. Its last step (rename the report into place, commit the rows) runs with both signals held
back: an interrupt then lands after the step, never inside it.
"""

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Interrupted", "held_signals", "raise_interrupt", "sigterm_interrupts"]

HELD = {signal.SIGINT, signal.SIGTERM}


class Interrupted(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C."""


def raise_interrupt(signum: int, frame: Any) -> None:
    raise Interrupted(signal.Signals(signum).name)


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt inside the block (the handler before is put back)."""
    previous = signal.signal(signal.SIGTERM, raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def held_signals() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block is done, then arrive."""
    signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD)
