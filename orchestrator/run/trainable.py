"""The worker's side of a sweep: what one Ray Tune trial runs, on whichever node Tune places it.

The driver hands the Tune trials their `TrialPack`s (each trial's config and resources) through
Ray's object store (`tune.with_parameters`), and Tune's param space holds each pack's key: Tune
swaps any object in a param space for a placeholder that the driver's callbacks could not read.
For each trial of its pack (most packs hold one; see `run.packing`) the worker reports that it
starts, resumes from the trial key's `SavedCheckpoint`, trains, saves a checkpoint and reports its
`CheckpointReport` at every checkpoint (a data-parallel trial's workers do, through
`run.parallel`, by the same `run.resume.train_from`). Everything here runs on a worker; the driver's code
is in `run.scheduler` and `run.callbacks`, which read what this reports (`run.messages`).
"""

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from orchestrator.run.cells import TrialCell, TrialPack
from orchestrator.run.messages import Failed, Message, Reported, Restarted, Started, result_of
from orchestrator.run.resume import checkpoint_folder, train_from

__all__ = ["train_from", "trainable"]


def _pick_device(gpus: float) -> str:
    """CUDA when Ray gave this trial a GPU and torch sees one, else the CPU."""
    import ray
    import torch

    if gpus > 0 and ray.get_gpu_ids() and torch.cuda.is_available():
        return "cuda"
    return "cpu"


def trainable(
    config: dict, packs: dict[str, TrialPack], storage: str, runner: Callable[..., Any] | None, retries: int
) -> None:
    """One Ray Tune trial: each trial of its pack in turn, resumed from its key's checkpoint if
    there is one, trained and reported. A trial alone lets its error end the Tune trial, which
    the driver's retry budget judges; a packed trial is retried here, up to `retries` times, and
    then recorded as failed, so that the pack's other trials still run."""
    import torch

    pack = packs[config["trial"]]
    torch.set_num_threads(max(1, int(pack.ask.cpu)))
    if len(pack.cells) == 1:
        _run_cell(pack.ask, storage, runner)
        return
    for cell in pack.cells:
        _run_packed(cell, storage, runner, retries)


def _run_packed(cell: TrialCell, storage: str, runner: Callable[..., Any] | None, retries: int) -> None:
    """Run one trial of a pack, retrying it in this process from its checkpoint after an error."""
    import traceback

    from ray import tune

    for attempt in range(retries + 1):
        try:
            _run_cell(cell, storage, runner)
            return
        except Exception as error:  # the pack goes on; the driver records what happened
            line = traceback.format_exception_only(error)[-1].strip()[:500]
            tune.report(result_of(Failed(cell.key, line, attempt < retries)))


def _run_cell(cell: TrialCell, storage: str, runner: Callable[..., Any] | None) -> None:
    """Say the trial starts, resume it from its checkpoint (re-reporting its rows), train, report."""
    from ray import tune

    from orchestrator.training.checkpoint import CheckpointError, SavedCheckpoint, set_aside

    def report(*messages: Message) -> None:
        tune.report(result_of(*messages))

    directory = checkpoint_folder(storage, cell.key)
    report(Started(cell.key))
    try:
        saved = SavedCheckpoint.load(directory, cell.key)
    except CheckpointError as error:  # retrying cannot mend it: set it aside, start over, once
        saved, aside = None, set_aside(error, directory)
        report(Restarted(cell.key, f"{error}; moved aside to {aside.name}, starting over from step 0"))
    if saved is not None:
        # The driver may have died before rows reached the store, or this is another store run
        # from the same folder: report every row the trial has made (writes are idempotent,
        # so each store ends with each row once), and stop if the trial had finished.
        every_row = replace(saved.report, rows=saved.history).as_dict()
        finished = saved.report.status.finished
        report(Reported(every_row, None if finished else saved.report.samples_seen))
        if finished:
            return
    if cell.workers > 1:
        from orchestrator.run.parallel import run_data_parallel

        run_data_parallel(cell, storage, runner)
        return
    train_from(cell, storage, runner, saved, report, _pick_device(cell.gpu))
