"""The worker's side of a sweep: what one Ray Tune trial runs, on whichever node Tune places it.

The driver hands the Tune trials their `TrialPack`s (each trial's config and resources) through
Ray's object store (`tune.with_parameters`), and Tune's param space holds each pack's key: Tune
swaps any object in a param space for a placeholder that the driver's callbacks could not read.
For each trial of its pack (most packs hold one; see `run.packing`) the worker reports that it
starts, resumes from the trial key's `SavedCheckpoint`, trains, saves a checkpoint and reports its
`CheckpointReport` at every checkpoint (a data-parallel trial's workers do, through
`run.parallel`). Everything here runs on a worker; the driver's code is in
`run.scheduler` and `run.callbacks`, which read what this reports under `REPORT_KEY`.
"""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from orchestrator.run.cells import (
    FAILED_KEY,
    REPORT_KEY,
    RESTARTED_KEY,
    RESUMED_KEY,
    STARTED_KEY,
    TrialCell,
    TrialPack,
)

__all__ = ["trainable"]


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
            tune.report({FAILED_KEY: {"key": cell.key, "error": line, "retry": attempt < retries}})


def _run_cell(cell: TrialCell, storage: str, runner: Callable[..., Any] | None) -> None:
    """Say the trial starts, resume it from its checkpoint (re-reporting its rows), train, report."""
    import socket

    import ray
    from ray import tune

    from orchestrator.training.checkpoint import CheckpointError, SavedCheckpoint, set_aside
    from orchestrator.training.loop import run_trial

    directory = Path(storage) / "checkpoints" / cell.key
    node = ray.get_runtime_context().get_node_id()[:8]  # tells apart nodes that share a hostname
    tune.report({STARTED_KEY: cell.key})

    def on_checkpoint(checkpoint: SavedCheckpoint) -> None:
        checkpoint.save(directory)
        tune.report({REPORT_KEY: checkpoint.report.as_dict()})  # Tune keeps no copy of the folder

    try:
        saved = SavedCheckpoint.load(directory, cell.key)
    except CheckpointError as error:  # retrying cannot mend it: set it aside, start over, once
        saved, aside = None, set_aside(error, directory)
        reason = f"{error}; moved aside to {aside.name}, starting over from step 0"
        tune.report({RESTARTED_KEY: {"key": cell.key, "reason": reason}})
    if saved is not None:
        # The driver may have died before rows reached the store, or this is another store run
        # from the same folder: report every row the trial has made (writes are idempotent,
        # so each store ends with each row once), and stop if the trial had finished.
        every_row = replace(saved.report, rows=saved.history).as_dict()
        finished = saved.report.status.finished
        resumed = {} if finished else {RESUMED_KEY: saved.report.samples_seen}
        tune.report({REPORT_KEY: every_row, **resumed})
        if finished:
            return
    if cell.workers > 1:
        from orchestrator.run.parallel import run_data_parallel

        run_data_parallel(cell, storage, runner)
        return
    (runner or run_trial)(
        cell.config,
        on_checkpoint,
        resume=saved,
        device=_pick_device(cell.gpu),
        cache_dir=Path(storage) / "cache",
        host=f"{socket.gethostname()}/{node}",
    )
