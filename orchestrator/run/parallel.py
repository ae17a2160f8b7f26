"""A data-parallel trial: its Tune trial drives a Ray Train `TorchTrainer`, whose workers each run
`run_trial` with their `Replica` (gloo on CPUs, NCCL on GPUs).

The Tune trial holds only `DRIVER_CPU` while its workers train; each worker holds the trial's
`cpu` and `gpu`, placed by the sweep's `placement`. Every worker resumes from the trial's one
checkpoint folder (shared storage on a cluster); the leader (rank 0) alone evaluates, saves there
through `SavedCheckpoint` and reports, and Ray Train's `TuneReportCallback` hands the leader's
report to the Tune trial, so rows reach the driver as a one-process trial's do.

Failures: a worker's error ends the Train run and so the Tune trial, which orch's retry budget
counts as any trial's (`run.retries`); a retry resumes from the last checkpoint.

The workers' placement group belongs to the Train controller, an actor of the Tune trial's, and
lives as long as the driver unless the controller removes it. A controller that dies with its
Tune trial (the trial's node lost, its process killed) cannot, and Ray Train's own cleaner needs
the State API, which a cluster without a dashboard lacks: the group would hold its CPUs and GPUs
for the rest of the sweep, and a retry needing them would wait forever. So the workers' first
result names the group (`run.messages.Workers`), and the driver removes it whenever the trial stops
(`release_workers`).
"""

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.run.cells import TrialCell
from orchestrator.run.messages import Message, Workers, result_of

__all__ = ["DRIVER_CPU", "release_workers", "run_data_parallel"]

DRIVER_CPU = 0.01  # what the Tune trial of a data-parallel trial holds: it only waits on its workers


def run_data_parallel(cell: TrialCell, storage: str, runner: Callable[..., Any] | None) -> None:
    """Train `cell`'s trial on its workers to the end (or raise the Train run's error)."""
    import ray.train
    from ray.train.torch import TorchConfig, TorchTrainer
    from ray.tune.integration.ray_train import TuneReportCallback

    per_worker = {"CPU": cell.cpu, **({"GPU": cell.gpu} if cell.gpu > 0 else {})}
    trainer = TorchTrainer(
        _worker,
        train_loop_config={"cell": cell, "storage": storage, "runner": runner},
        torch_config=TorchConfig(backend="nccl" if cell.gpu > 0 else "gloo"),
        scaling_config=ray.train.ScalingConfig(
            num_workers=cell.workers,
            use_gpu=cell.gpu > 0,
            resources_per_worker=per_worker,
            placement_strategy=cell.placement.upper(),
        ),
        run_config=ray.train.RunConfig(
            name=f"{cell.key[:12]}-{uuid.uuid4().hex[:8]}",
            storage_path=str(Path(storage) / "ray-train"),
            callbacks=[TuneReportCallback()],
            failure_config=ray.train.FailureConfig(max_failures=0),  # orch's budget counts retries
        ),
    )
    trainer.fit()


def release_workers(placement_group: str) -> None:
    """On the driver: remove a stopped trial's workers' placement group (hex id) if it is left."""
    import ray
    from ray.util.placement_group import PlacementGroup, remove_placement_group

    group = PlacementGroup(ray.PlacementGroupID.from_hex(placement_group))
    if ray.util.placement_group_table(group).get("state", "REMOVED") != "REMOVED":
        remove_placement_group(group)


def _worker(setup: dict) -> None:
    """One worker of the trial: name the workers' placement group to the driver, resume from the
    trial's checkpoint, train its rows, and (the leader) save and report every checkpoint. Every
    worker calls `ray.train.report` at each report, as Ray Train asks; the followers' checkpoint
    reports are empty."""
    import ray
    import ray.train
    import ray.train.torch
    import torch

    from orchestrator.run.resume import checkpoint_folder, train_from
    from orchestrator.training.checkpoint import SavedCheckpoint
    from orchestrator.training.replicas import Replica

    def report(*messages: Message) -> None:
        ray.train.report(result_of(*messages))

    cell: TrialCell = setup["cell"]
    report(Workers(ray.get_runtime_context().get_placement_group_id()))
    context = ray.train.get_context()
    replica = Replica(context.get_world_rank(), context.get_world_size())
    torch.set_num_threads(max(1, int(cell.cpu)))
    saved = SavedCheckpoint.load(checkpoint_folder(setup["storage"], cell.key), cell.key)
    replica.barrier()  # every worker has read the folder before the leader writes to it
    device = ray.train.torch.get_device() if cell.gpu > 0 else torch.device("cpu")

    def on_follow() -> None:  # a follower reports where the leader does, as Ray Train asks
        ray.train.report({})

    train_from(
        cell,
        setup["storage"],
        setup["runner"],
        saved,
        report,
        str(device),
        replica=replica,
        on_follow=on_follow,
    )
