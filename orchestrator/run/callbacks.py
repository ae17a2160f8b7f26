"""The driver's side of Ray Tune: trial events become store rows and statuses (`StoreWriter`, in
`run.outbox`) and progress lines (`ProgressView`). `TuneEvents` composes the two.

Only the driver writes: trials (`run.trainable`) `tune.report` a `CheckpointReport` as a plain
dict under `REPORT_KEY`, keyed by the trial key (never Ray's trial id), so a retried or
resubmitted trial cannot duplicate a row. A resumed trial also reports `RESUMED_KEY`: the samples
it resumed at; a data-parallel one `WORKERS_KEY`, its workers' placement group, which the driver
releases when the trial stops (see `run.parallel`).
Whether an error is retried is `run.retries`' verdict.
"""

from collections.abc import Callable
from typing import Any

from db import CheckpointReport, TrialStatus
from orchestrator.run.cells import REPORT_KEY, RESTARTED_KEY, RESUMED_KEY, WORKERS_KEY, key_of
from orchestrator.run.outbox import StoreWriter
from orchestrator.run.progress import ProgressView
from orchestrator.run.retries import LOST, RETRY, RetryBudget, error_line

__all__ = ["TuneEvents", "tune_callback"]


class TuneEvents:
    """Tune's trial callbacks, forwarded to the store writer and then to the progress view."""

    def __init__(
        self, writer: StoreWriter, view: ProgressView, budget: RetryBudget, release: Callable[[str], None]
    ) -> None:
        self.writer = writer
        self.view = view
        self.budget = budget
        self.release = release  # removes a stopped trial's workers' placement group
        self.restarted: set[str] = set()  # trials whose unusable checkpoint was set aside
        self.workers: dict[str, str] = {}  # trial key -> its running workers' placement group

    def on_step_end(self, iteration: int, trials: list, **info: Any) -> None:
        self.writer.flush()  # a batch goes out once due; an outage's buffer is retried

    def on_trial_start(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self.writer.started(key_of(trial))
        self.view.started(key_of(trial))

    def on_trial_result(self, iteration: int, trials: list, trial: Any, result: dict, **info: Any) -> None:
        key = key_of(trial)
        if WORKERS_KEY in result:
            self.workers[key] = result[WORKERS_KEY]
        if RESTARTED_KEY in result:  # its checkpoint was unusable: set aside, the trial starts over
            self.restarted.add(key)
            self.writer.retried(key, result[RESTARTED_KEY])
            self.view.event(key, result[RESTARTED_KEY])
        if REPORT_KEY not in result:
            return
        try:
            report = CheckpointReport.from_dict(result[REPORT_KEY])
        except (KeyError, TypeError, ValueError) as error:  # the driver never dies on a trial's report
            self.view.event(key, f"a report that does not read ({error}); its rows were not written")
            return
        self.writer.checkpoint(report)
        self.view.progress(report.trial_key, report.samples_seen)
        if RESUMED_KEY in result:
            resumed = f"resumed from its checkpoint at {result[RESUMED_KEY]:,} samples"
            self.view.event(report.trial_key, resumed)

    def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self._release_workers(key_of(trial))
        report = _last_report(trial)
        if self.budget.gave_up(key_of(trial)):  # stopped by the retry scheduler
            status, reason = TrialStatus.FAILED, error_line(trial)
        elif report is None or not report.status.finished:
            status, reason = TrialStatus.FAILED, "the trial ended without reaching its sample budget"
        else:
            status, reason = report.status, report.reason
        self._finished(key_of(trial), status, reason)

    def on_trial_recover(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        key, verdict = key_of(trial), self.budget.verdicts.get(key_of(trial))
        self._release_workers(key)  # before Tune requeues it: the retry may need those resources
        if verdict == LOST:
            reason = f"node lost ({error_line(trial)}); resuming on a live node, not counted as a retry"
        elif verdict == RETRY:
            reason = f"retrying after {error_line(trial)}"
        else:
            return  # no retry left: the scheduler stops it, and on_trial_complete says why
        self.writer.retried(key, reason)
        self.view.event(key, reason)

    def on_trial_error(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        self._release_workers(key_of(trial))
        self._finished(key_of(trial), TrialStatus.FAILED, error_line(trial))

    def _release_workers(self, key: str) -> None:
        if (group := self.workers.pop(key, None)) is not None:
            self.release(group)

    def _finished(self, key: str, status: TrialStatus, reason: str | None) -> None:
        self.writer.finished(key, status, reason)
        self.view.finished(key, status, reason)


def _last_report(trial: Any) -> CheckpointReport | None:
    """The trial's last report, None when it sent none that reads."""
    try:
        return CheckpointReport.from_dict((trial.last_result or {})[REPORT_KEY])
    except (KeyError, TypeError, ValueError):
        return None


def tune_callback(url: str, view: ProgressView, store_wait_s: float, budget: RetryBudget) -> Any:
    """A `ray.tune.Callback` around TuneEvents (Ray imported only when a sweep runs)."""
    from ray.tune import Callback

    from orchestrator.run.parallel import release_workers

    class _Callback(TuneEvents, Callback):
        pass

    return _Callback(StoreWriter(url, store_wait_s, notify=view.note), view, budget, release_workers)
