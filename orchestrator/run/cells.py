"""What the driver and a trial's processes share: the `TrialCell` a trial is handed, the key
that names a Tune trial's trial, and the keys of the results a trial reports to the driver."""

from dataclasses import dataclass
from typing import Any

from orchestrator.spec import TrialConfig

__all__ = ["REPORT_KEY", "RESTARTED_KEY", "RESUMED_KEY", "WORKERS_KEY", "TrialCell", "key_of"]

REPORT_KEY = "orch_checkpoint"  # the key of a trial's Tune result that carries its report
RESUMED_KEY = "orch_resumed_at"  # present in the first result of a trial resumed from a checkpoint
RESTARTED_KEY = "orch_restarted"  # why an unusable checkpoint was set aside and the trial restarted
WORKERS_KEY = "orch_workers"  # a data-parallel trial's first result: its workers' placement group


@dataclass(frozen=True)
class TrialCell:
    """One grid cell of Tune's param space: the trial and what it asks of the cluster (each of
    its `workers` the `cpu` and `gpu`; more than one worker makes it a data-parallel trial)."""

    config: TrialConfig
    cpu: float
    gpu: float
    workers: int = 1
    placement: str = "pack"

    @property
    def key(self) -> str:
        return self.config.key


def key_of(trial: Any) -> str:
    """The key of the trial a Tune trial runs (its param space's one value)."""
    return trial.config["trial"]
