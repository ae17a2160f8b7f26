"""What a scorer gives for one metric and reference at a checkpoint."""

from dataclasses import dataclass

__all__ = ["Score"]


@dataclass(frozen=True)
class Score:
    """One value with its noise and null; None where the metric has none."""

    metric: str
    reference: str
    value: float
    se: float | None = None
    null_mean: float | None = None
    null_p95: float | None = None
    chance: float | None = None
