"""SIGTERM handled like Ctrl-C, and the few steps a signal may not cut in two.

Every command turns SIGTERM into a KeyboardInterrupt (the group's `main`, before a command's
heavy imports), so that `kill PID` and Ctrl-C both unwind through its cleanup and end in exit
130. Its last step (rename the report into place, commit the rows) runs with both signals held
back: an interrupt then lands after the step, never inside it.
"""

import signal
import threading
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
    """SIGTERM raises KeyboardInterrupt inside the block (the handler before is put back); off
    the main thread, where no handler can be set, the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
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
