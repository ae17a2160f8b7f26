"""The worker's side of a sweep: what one Ray Tune trial runs, on whichever node Tune places it.

The driver hands the trials their `TrialCell`s (config and resources) through Ray's object store
(`tune.with_parameters`), and Tune's param space holds each trial's key: Tune swaps any object in
a param space for a placeholder that the driver's callbacks could not read. The worker resumes
from the trial key's `SavedCheckpoint`, trains, saves a checkpoint and reports its
`CheckpointReport` at every checkpoint (a data-parallel trial's workers do, through
`run.parallel`). Everything here runs on a worker; the driver's code is in
`run.scheduler` and `run.callbacks`, which read what this reports under `REPORT_KEY`.
"""

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from orchestrator.run.cells import REPORT_KEY, RESTARTED_KEY, RESUMED_KEY, TrialCell

__all__ = ["trainable"]


def _pick_device(gpus: float) -> str:
    """CUDA when Ray gave this trial a GPU and torch sees one, else the CPU."""
    import ray
    import torch

    if gpus > 0 and ray.get_gpu_ids() and torch.cuda.is_available():
        return "cuda"
    return "cpu"


def trainable(
    config: dict, cells: dict[str, TrialCell], storage: str, runner: Callable[..., Any] | None
) -> None:
    """One Ray Tune trial: resume from this key's checkpoint if there is one, train, report."""
    import socket

    import ray
    import torch
    from ray import tune

    from orchestrator.training.checkpoint import CheckpointError, SavedCheckpoint, set_aside
    from orchestrator.training.loop import run_trial

    cell = cells[config["trial"]]
    directory = Path(storage) / "checkpoints" / cell.key
    torch.set_num_threads(max(1, int(cell.cpu)))
    node = ray.get_runtime_context().get_node_id()[:8]  # tells apart nodes that share a hostname

    def on_checkpoint(checkpoint: SavedCheckpoint) -> None:
        checkpoint.save(directory)
        tune.report({REPORT_KEY: checkpoint.report.as_dict()})  # Tune keeps no copy of the folder

    try:
        saved = SavedCheckpoint.load(directory, cell.key)
    except CheckpointError as error:  # retrying cannot mend it: set it aside, start over, once
        saved, aside = None, set_aside(error, directory)
        tune.report({RESTARTED_KEY: f"{error}; moved aside to {aside.name}, starting over from step 0"})
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
