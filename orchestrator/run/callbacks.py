"""The driver's side of Ray Tune: trial events become store rows and statuses (`StoreWriter`, in
`run.outbox`) and progress lines (`ProgressView`). `TuneEvents` composes the two.

Only the driver writes: trials `tune.report` a `CheckpointReport` as a plain dict under
`REPORT_KEY`, keyed by the trial key (never Ray's trial id), so a retried or resubmitted trial
cannot duplicate a row.
"""

from pathlib import Path
from typing import Any

from db import CheckpointReport
from orchestrator.run.outbox import StoreWriter
from orchestrator.run.progress import ProgressView

__all__ = ["FINISHED", "REPORT_KEY", "TuneEvents", "tune_callback"]

FINISHED = ("done", "collapsed")
REPORT_KEY = "orch_checkpoint"  # the one key of a trial's Tune result that orch reads


class TuneEvents:
    """Tune's trial callbacks, forwarded to the store writer and then to the progress view."""

    def __init__(self, writer: StoreWriter, view: ProgressView) -> None:
        self.writer = writer
        self.view = view

    @staticmethod
    def _key(trial: Any) -> str:
        return trial.config["trial"]["key"]

    def on_step_end(self, iteration: int, trials: list, **info: Any) -> None:
        self.writer.flush()  # an outage's buffer is retried between events too

    def on_trial_start(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self.writer.started(self._key(trial))
        self.view.started(self._key(trial))

    def on_trial_result(self, iteration: int, trials: list, trial: Any, result: dict, **info: Any) -> None:
        report = CheckpointReport.from_dict(result[REPORT_KEY])
        self.writer.checkpoint(report)
        self.view.progress(report.trial_key, report.samples_seen)

    def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        last = (trial.last_result or {}).get(REPORT_KEY)
        report = CheckpointReport.from_dict(last) if last else None
        if report is None or report.status not in FINISHED:
            status, reason = "failed", "the trial ended without reaching its sample budget"
        else:
            status, reason = report.status, report.reason
        self._finished(self._key(trial), status, reason)

    def on_trial_recover(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        reason = f"retrying after {_error_line(trial)}"
        self.writer.retried(self._key(trial), reason)
        self.view.retried(self._key(trial), reason)

    def on_trial_error(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self._finished(self._key(trial), "failed", _error_line(trial))

    def _finished(self, key: str, status: str, reason: str | None) -> None:
        self.writer.finished(key, status, reason)
        self.view.finished(key, status, reason)


def _error_line(trial: Any) -> str:
    """The exception's last line ('ValueError: boom'), from Tune's error file."""
    path = getattr(trial, "error_file", None)
    text = Path(path).read_text() if path and Path(path).exists() else ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return (lines[-1] if lines else "unknown error")[:500]


def tune_callback(url: str, view: ProgressView, store_wait_s: float) -> Any:
    """A `ray.tune.Callback` around TuneEvents (Ray imported only when a sweep runs)."""
    from ray.tune import Callback

    class _Callback(TuneEvents, Callback):
        pass

    return _Callback(StoreWriter(url, store_wait_s, notify=view.note), view)
