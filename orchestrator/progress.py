"""Sweep progress as the store records it: what `orch status` prints and the live view reads."""

import sys
import time
from typing import TYPE_CHECKING

from db import Store
from orchestrator.sizes import format_size

if TYPE_CHECKING:
    from orchestrator.spec import TrialConfig

__all__ = ["ProgressView", "sweep_status"]


def sweep_status(store: Store, name: str) -> dict:
    """Per-trial state and progress of one sweep, with totals, in stable snake_case keys."""
    frame = store.trials_frame(name)
    trials = [
        {
            "key": row.key,
            "objective": row.objective,
            "model": row.model,
            "data_size": int(row.data_size),
            "seed": int(row.seed),
            "status": row.status,
            "samples_seen": int(row.samples_seen),
            "budget_samples": int(row.budget_samples),
            "progress": min(1.0, row.samples_seen / row.budget_samples),
            "attempts": int(row.attempts),
            "reason": row.reason,
            "n_params": None if row.n_params is None else int(row.n_params),
            "host": row.host,
            "device": row.device,
            "held_out": bool(row.held_out),
        }
        for row in frame.itertuples()
    ]
    by_status: dict[str, int] = {}
    for trial in trials:
        by_status[trial["status"]] = by_status.get(trial["status"], 0) + 1
    seen = sum(min(t["samples_seen"], t["budget_samples"]) for t in trials)
    budget = sum(t["budget_samples"] for t in trials)
    return {
        "name": name,
        "trials": trials,
        "totals": {
            "trials": len(trials),
            "by_status": by_status,
            "samples_seen": seen,
            "budget_samples": budget,
            "progress": seen / budget if budget else 0.0,
        },
    }


class ProgressView:
    """Live sweep progress on stderr: one rewritten line on a terminal, log lines elsewhere.

    Holds no stream (it looks up sys.stderr each time), so Tune can pickle the callback.
    """

    def __init__(self, trials: "list[TrialConfig]") -> None:
        self.live = sys.stderr.isatty()
        self.labels = {
            t.key: f"{t.key[:10]} {t.objective} {t.model} {format_size(t.data_size)} seed {t.seed}"
            for t in trials
        }
        self.budgets = {t.key: t.budget_samples for t in trials}
        self.seen = dict.fromkeys(self.budgets, 0)
        self.status: dict[str, str] = {}
        self.started_at = time.monotonic()

    def begin(self) -> None:
        self.started_at = time.monotonic()
        self._log(f"running {len(self.budgets)} trials")

    def started(self, key: str) -> None:
        self.status[key] = "running"
        self._log(f"{self.labels[key]}: started")

    def progress(self, key: str, samples_seen: int) -> None:
        self.seen[key] = min(samples_seen, self.budgets[key])
        if self.live:
            self._render()

    def retried(self, key: str, reason: str) -> None:
        self._log(f"{self.labels[key]}: {reason}")

    def finished(self, key: str, status: str, reason: str | None) -> None:
        self.status[key] = status
        if status in ("done", "collapsed"):
            self.seen[key] = self.budgets[key]
        self._log(f"{self.labels[key]}: {status}" + (f" ({reason})" if reason else ""))

    def end(self) -> None:
        if self.live:
            sys.stderr.write("\n")
            sys.stderr.flush()

    def line(self) -> str:
        counts = {s: sum(1 for v in self.status.values() if v == s) for s in ("done", "running", "failed")}
        elapsed = time.monotonic() - self.started_at
        seen, budget = sum(self.seen.values()), sum(self.budgets.values())
        rate = seen / elapsed if elapsed > 0 else 0.0
        eta = (budget - seen) / rate if rate > 0 else float("nan")
        return (
            f"{counts['done']}/{len(self.budgets)} done, {counts['running']} running, "
            f"{counts['failed']} failed | {rate:,.0f} samples/s | "
            f"elapsed {_clock(elapsed)} | ETA {_clock(eta)}"
        )

    def _render(self) -> None:
        sys.stderr.write("\r\033[K" + self.line())
        sys.stderr.flush()

    def _log(self, message: str) -> None:
        if self.live:
            sys.stderr.write("\r\033[K" + message + "\n")
            self._render()
        else:
            sys.stderr.write(f"[{_clock(time.monotonic() - self.started_at)}] {message} | {self.line()}\n")
        sys.stderr.flush()


def _clock(seconds: float) -> str:
    if seconds != seconds:  # NaN: no rate yet
        return "--:--"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}" if minutes >= 60 else f"{minutes}:{secs:02d}"
