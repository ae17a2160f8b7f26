"""The one path by which a trial trains from its checkpoint, in a one-process Tune trial
(`run.trainable`) and in each worker of a data-parallel one (`run.parallel`): every checkpoint
saved to the trial's folder and reported to the driver (`run.messages.Reported`)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.run.cells import TrialCell
from orchestrator.run.messages import Reported

__all__ = ["checkpoint_folder", "train_from"]


def checkpoint_folder(storage: str, key: str) -> Path:
    """Where the trial's checkpoint lives (shared storage on a cluster)."""
    return Path(storage) / "checkpoints" / key


def train_from(
    cell: TrialCell,
    storage: str,
    runner: Callable[..., Any] | None,
    saved: Any,
    report: Callable[..., None],
    device: str,
    **replica: Any,
) -> None:
    """Train the trial from `saved` (None: from step 0), each checkpoint saved to the trial's
    folder and reported: a one-process trial's, and each data-parallel worker's (`replica`: its
    `Replica` and what a follower calls where the leader reports)."""
    import socket

    import ray

    from orchestrator.training.loop import run_trial

    directory = checkpoint_folder(storage, cell.key)

    def on_checkpoint(checkpoint: Any) -> None:
        checkpoint.save(directory)
        report(Reported(checkpoint.report.as_dict()))  # Tune keeps no copy of the folder

    node = ray.get_runtime_context().get_node_id()[:8]  # tells apart nodes that share a hostname
    (runner or run_trial)(
        cell.config,
        on_checkpoint,
        resume=saved,
        device=device,
        cache_dir=Path(storage) / "cache",
        host=f"{socket.gethostname()}/{node}",
        **replica,
    )
