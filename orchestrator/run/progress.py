"""Live sweep progress: one rewritten line on a terminal, log lines elsewhere.

Library code prints nothing: the view hands its text to `write`, which the CLI points at stderr.
It holds no stream, so Tune can pickle the callback that owns it.
"""

import time
from collections.abc import Callable

from db import TrialStatus
from foundation.sizes import format_size
from orchestrator.sweepfile import TrialConfig

__all__ = ["ProgressView"]


class ProgressView:
    """Counts of done, running and failed trials, samples/s, elapsed time and an ETA, written
    through `write`: rewritten in place when `live` (a terminal), else one log line an event."""

    def __init__(
        self, trials: list[TrialConfig], write: Callable[[str], None] | None = None, live: bool = False
    ) -> None:
        self.write = write or _silent
        self.live = live
        self.labels = {
            t.key: f"{t.key[:10]} {t.objective} {t.model} {format_size(t.data_size)} seed {t.seed}"
            for t in trials
        }
        self.budgets = {t.key: t.budget_samples for t in trials}
        self.seen = dict.fromkeys(self.budgets, 0)
        self.status: dict[str, TrialStatus] = {}
        self.started_at = time.monotonic()

    def begin(self) -> None:
        self.started_at = time.monotonic()
        self._log(f"running {len(self.budgets)} trials")

    def started(self, key: str) -> None:
        self.status[key] = TrialStatus.RUNNING
        self._log(f"{self.labels[key]}: started")

    def progress(self, key: str, samples_seen: int) -> None:
        self.seen[key] = min(samples_seen, self.budgets[key])
        if self.live:
            self._render()

    def event(self, key: str, text: str) -> None:
        """A line about one trial between its start and its end (a retry, a resume)."""
        self._log(f"{self.labels[key]}: {text}")

    def finished(self, key: str, status: TrialStatus, reason: str | None) -> None:
        self.status[key] = status
        if status.finished:
            self.seen[key] = self.budgets[key]
        self._log(f"{self.labels[key]}: {status}" + (f" ({reason})" if reason else ""))

    def note(self, message: str) -> None:
        """A line about the sweep rather than a trial (the store is unreachable, and back)."""
        self._log(message)

    def end(self) -> None:
        if self.live:
            self.write("\n")

    def line(self) -> str:
        shown = (TrialStatus.DONE, TrialStatus.RUNNING, TrialStatus.FAILED)
        counts = {s: sum(1 for v in self.status.values() if v == s) for s in shown}
        elapsed = time.monotonic() - self.started_at
        seen, budget = sum(self.seen.values()), sum(self.budgets.values())
        rate = seen / elapsed if elapsed > 0 else 0.0
        eta = (budget - seen) / rate if rate > 0 else float("nan")
        return (
            f"{counts[TrialStatus.DONE]}/{len(self.budgets)} done, {counts[TrialStatus.RUNNING]} running, "
            f"{counts[TrialStatus.FAILED]} failed | {rate:,.0f} samples/s | "
            f"elapsed {_clock(elapsed)} | ETA {_clock(eta)}"
        )

    def _render(self) -> None:
        self.write("\r\033[K" + self.line())

    def _log(self, message: str) -> None:
        if self.live:
            self.write("\r\033[K" + message + "\n")
            self._render()
        else:
            self.write(f"[{_clock(time.monotonic() - self.started_at)}] {message} | {self.line()}\n")


def _clock(seconds: float) -> str:
    if seconds != seconds:  # NaN: no rate yet
        return "--:--"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}" if minutes >= 60 else f"{minutes}:{secs:02d}"


def _silent(text: str) -> None:
    """The default sink: a library prints nothing unless its caller asks."""
