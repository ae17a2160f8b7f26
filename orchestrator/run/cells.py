"""What the driver and a trial's processes share: the `TrialCell` a trial is handed, the
`TrialPack` a Tune trial runs, and the key that names it (what they tell each other:
`run.messages`)."""

import hashlib
from dataclasses import dataclass
from typing import Any

from orchestrator.sweepfile import Resources, TrialConfig

__all__ = [
    "TrialCell",
    "TrialPack",
    "key_of",
]


@dataclass(frozen=True)
class TrialCell:
    """One grid cell of Tune's param space: the trial and what it asks of the cluster (each of
    its `workers` the `cpu` and `gpu`; more than one worker makes it a data-parallel trial)."""

    config: TrialConfig
    cpu: float
    gpu: float
    workers: int = 1
    placement: str = "pack"

    @classmethod
    def of(cls, trial: TrialConfig, resources: Resources) -> "TrialCell":
        """The trial with what its model's `resources` ask of the cluster."""
        return cls(trial, resources.cpu, resources.gpu, resources.workers, resources.placement)

    @property
    def key(self) -> str:
        return self.config.key


@dataclass(frozen=True)
class TrialPack:
    """What one Tune trial runs: one trial, or several short ones run one after another in one
    process (`run.packing`), so that each does not pay a Tune trial's start of its own. All
    cells of a pack ask for the same resources."""

    cells: tuple[TrialCell, ...]

    @property
    def key(self) -> str:
        """A single trial's own key; a pack's, from its trials' keys."""
        if len(self.cells) == 1:
            return self.cells[0].key
        members = "".join(cell.key for cell in self.cells)
        return "pack-" + hashlib.sha256(members.encode()).hexdigest()[:16]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(cell.key for cell in self.cells)

    @property
    def ask(self) -> TrialCell:
        """The cell whose resources the pack asks for (they are all the same)."""
        return self.cells[0]


def key_of(trial: Any) -> str:
    """The key of the pack a Tune trial runs (its param space's one value)."""
    return trial.config["trial"]
