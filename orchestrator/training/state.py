"""Where a trial stands between steps.

`TrainState` is saved as the checkpoint's `meta.json`, so a resumed trial continues from the
same samples seen, step, FLOPs, wall time and next checkpoint.
"""

from dataclasses import asdict, dataclass
from typing import Any

from db import checked

__all__ = ["TrainState"]


@dataclass
class TrainState:
    samples_seen: int = 0
    step: int = 0
    flops: float = 0.0
    tokens: int = 0  # real (not padding) tokens trained on
    positions: int = 0  # positions the encoder computed: each batch padded to its longest row
    wall_s: float = 0.0
    next_checkpoint: int = 0  # index into the trial's checkpoint schedule
    loss_sum: float = 0.0  # the training loss since the last checkpoint
    loss_count: int = 0
    initial_spread: float | None = None  # the untrained encoder's relative spread, set at S = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: Any) -> "TrainState":
        """The state a checkpoint's meta.json holds, checked field by field (TypeError). A
        checkpoint from before token counts resumes with none counted for the steps it holds."""
        if isinstance(raw, dict):
            raw = {"tokens": 0, "positions": 0, **raw}
        return cls(**checked(cls, raw))

    @property
    def mean_loss(self) -> float | None:
        return self.loss_sum / self.loss_count if self.loss_count else None
