"""The driver's side of Ray Tune: trial events become store rows and statuses (`StoreWriter`, in
`run.outbox`) and progress lines (`ProgressView`). `TuneEvents` composes the two.

Only the driver writes: trials (`run.trainable`) report `Started` as each starts, then
`tune.report` a `CheckpointReport` as a plain dict (`Reported`: `run.messages`), keyed by the trial key
(never Ray's trial id), so a retried or resubmitted trial cannot duplicate a row; its report with
a finished status ends it. A resumed trial's first report also holds the samples it resumed at;
a packed trial's caught error is `Failed`; a data-parallel one reports `Workers`, its workers'
placement group, which the driver releases when the trial stops (see `run.parallel`).
Whether an error is retried is `run.retries`' verdict.
"""

from collections.abc import Callable
from typing import Any

from db import CheckpointReport, TrialStatus
from orchestrator.run.cells import key_of
from orchestrator.run.messages import Failed, Reported, Restarted, Started, Workers, read
from orchestrator.run.outbox import StoreWriter
from orchestrator.run.progress import ProgressView
from orchestrator.run.retries import LOST, RETRY, RetryBudget, error_line
from orchestrator.run.tracking import Tracker

__all__ = ["TuneEvents", "tune_callback"]


class TuneEvents:
    """Tune's trial callbacks, forwarded to the store writer and then to the progress view. A
    Tune trial runs a pack (`run.packing`; most hold one trial): its results name the trial they
    are about, and what ends the Tune trial ends each of its trials that had not ended."""

    def __init__(
        self,
        writer: StoreWriter,
        view: ProgressView,
        budget: RetryBudget,
        release: Callable[[str], None],
        packs: dict[str, tuple[str, ...]],
        tracker: Tracker | None = None,
    ) -> None:
        self.writer = writer
        self.tracker = tracker  # `--log`: each trial's life, also to MLflow, TensorBoard or W&B
        self.view = view
        self.budget = budget
        self.release = release  # removes a stopped trial's workers' placement group
        self.packs = packs  # pack key -> its trials' keys
        self.restarted: set[str] = set()  # trials whose unusable checkpoint was set aside
        self.workers: dict[str, str] = {}  # pack key -> its running workers' placement group
        self.running: dict[str, str] = {}  # pack key -> the trial of it that runs now
        self.ended: set[str] = set()  # trials recorded done, collapsed or failed by this sweep

    def on_step_end(self, iteration: int, trials: list, **info: Any) -> None:
        self.writer.flush()  # a batch goes out once due; an outage's buffer is retried

    def on_trial_result(self, iteration: int, trials: list, trial: Any, result: dict, **info: Any) -> None:
        pack = key_of(trial)
        for message in read(result):
            match message:
                case Workers(placement_group):
                    self.workers[pack] = placement_group
                case Started(key):
                    self._started(pack, key)
                case Restarted(key, reason):  # its checkpoint was unusable: the trial starts over
                    self.restarted.add(key)
                    self.writer.retried(key, reason)
                    self.view.event(key, reason)
                case Failed(key, error, retry):  # a packed trial's error, caught in the pack's process
                    if retry:
                        self._retried(key, f"retrying after {error}")
                    else:
                        self._finished(key, TrialStatus.FAILED, error)
                case Reported():
                    self._report(pack, message)

    def _report(self, pack: str, message: Reported) -> None:
        try:
            report = CheckpointReport.from_dict(message.report)
        except (KeyError, TypeError, ValueError) as error:  # the driver never dies on a trial's report
            text = f"a report that does not read ({error}); its rows were not written"
            if pack in self.running:
                self.view.event(self.running[pack], text)
            else:
                self.view.note(f"orch: Tune trial {pack[:12]}: {text}")
            return
        self.writer.checkpoint(report)
        self.view.progress(report.trial_key, report.samples_seen)
        if self.tracker:
            self.tracker.checkpoint(report)
        if message.resumed_at is not None:
            resumed = f"resumed from its checkpoint at {message.resumed_at:,} samples"
            self.view.event(report.trial_key, resumed)
        if report.status.finished:
            self._finished(report.trial_key, report.status, report.reason)

    def on_trial_complete(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        pack = key_of(trial)
        self._release_workers(pack)
        if self.budget.gave_up(pack):  # stopped by the retry scheduler
            reason = error_line(trial)
        else:
            reason = "the trial ended without reaching its sample budget"
        for key in self._unended(pack):
            self._finished(key, TrialStatus.FAILED, reason)

    def on_trial_recover(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        pack, verdict = key_of(trial), self.budget.verdicts.get(key_of(trial))
        self._release_workers(pack)  # before Tune requeues it: the retry may need those resources
        if verdict == LOST:
            reason = f"node lost ({error_line(trial)}); resuming on a live node, not counted as a retry"
        elif verdict == RETRY:
            reason = f"retrying after {error_line(trial)}"
        else:
            return  # no retry left: the scheduler stops it, and on_trial_complete says why
        running = self.running.pop(pack, None)
        for key in [running] if running else self._unended(pack):
            self._retried(key, reason)

    def on_trial_error(self, iteration: int, trials: list, trial: Any, **info: Any) -> None:
        pack = key_of(trial)
        self._release_workers(pack)
        for key in self._unended(pack):
            self._finished(key, TrialStatus.FAILED, error_line(trial))

    def _started(self, pack: str, key: str) -> None:
        if key in self.ended:  # a finished trial of a retried pack: it only re-reports its rows
            return
        self.running[pack] = key
        self.writer.started(key)
        self.view.started(key)
        if self.tracker:
            self.tracker.started(key)

    def _unended(self, pack: str) -> list[str]:
        return [key for key in self.packs[pack] if key not in self.ended]

    def _release_workers(self, pack: str) -> None:
        if (group := self.workers.pop(pack, None)) is not None:
            self.release(group)

    def _retried(self, key: str, reason: str) -> None:
        self.writer.retried(key, reason)
        self.view.event(key, reason)

    def _finished(self, key: str, status: TrialStatus, reason: str | None) -> None:
        if key in self.ended:  # a finished trial's rows, reported again from its checkpoint
            return
        self.ended.add(key)
        self.writer.finished(key, status, reason)
        self.view.finished(key, status, reason)
        if self.tracker:
            self.tracker.finished(key, status, reason)

    def on_experiment_end(self, trials: list, **info: Any) -> None:
        if self.tracker:
            self.tracker.close()


def tune_callback(
    url: str,
    view: ProgressView,
    store_wait_s: float,
    budget: RetryBudget,
    packs: dict[str, tuple[str, ...]],
    tracker: Tracker | None = None,
) -> Any:
    """A `ray.tune.Callback` around TuneEvents (Ray imported only when a sweep runs)."""
    from ray.tune import Callback

    from orchestrator.run.parallel import release_workers

    class _Callback(TuneEvents, Callback):
        pass

    writer = StoreWriter(url, store_wait_s, notify=view.note)
    return _Callback(writer, view, budget, release_workers, packs, tracker)
