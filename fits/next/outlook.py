"""What every belief of the planner hands on: a candidate run (`Cell`), the runs assumed landed
(`Landed`) and a claim's expected interval once they have (`Outlook`). Types only."""

from dataclasses import dataclass

import numpy as np

__all__ = ["KNOWN", "OUTCOMES", "Cell", "Landed", "Outlook"]

OUTCOMES = 48  # simulated truths behind each expected width
KNOWN = 10**6  # the dof of a given SE: taken as known, its interval as good as normal


@dataclass(frozen=True)
class Cell:
    """A candidate: `seeds` new runs of (objective, model) on `samples` samples, costing `flops`
    (samples where the store has no FLOPs for it)."""

    objective: str
    model: str
    samples: float
    seeds: int
    flops: float


@dataclass(frozen=True)
class Outlook:
    """A claim's expected interval width after some runs land (ln high/low for a ratio), the
    chance its verdict is then decided and, for a gap, that the laws' gap is identifiable."""

    width: float
    decided: float
    identifiable: float | None = None
    effective: float | None = None  # median effective number of reweighted draws (law-based claims)


@dataclass(frozen=True)
class Landed:
    """The candidate runs assumed landed, and (a `DrawBelief`'s) the log-likelihood of each
    simulated outcome on each draw with how many runs each (objective, fitted S) got: a value
    the planner holds for its picks and extends by one candidate at a time (`land`)."""

    cells: tuple[Cell, ...] = ()
    logw: np.ndarray | None = None  # (OUTCOMES, D)
    used: tuple[tuple[tuple[str, float], int], ...] = ()
