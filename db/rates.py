"""How long and how fast each objective's done trials trained in a store: what a sweep orders its
trials by, and what bench/scheduler.py packs."""

import statistics
from collections.abc import Iterable

import db.queries as queries
from db.store import Store

__all__ = ["finished_trainings", "training_rates"]


def finished_trainings(store: Store, objectives: Iterable[str]) -> list[tuple[str, float, float]]:
    """(objective, FLOPs, wall seconds) of every done trial of these objectives, at its end (the
    wall time holds the trial's evaluation too)."""
    with store.session_scope() as connection:
        rows = connection.execute(queries.finished_training(list(objectives)))
        return [(objective, flops, wall_s) for objective, flops, wall_s in rows]


def training_rates(store: Store, objectives: Iterable[str]) -> dict[str, float]:
    """Training FLOP/s per objective, the median over its done trials in the store; objectives
    with none are left out."""
    rates: dict[str, list[float]] = {}
    for objective, flops, wall_s in finished_trainings(store, objectives):
        if flops and wall_s:
            rates.setdefault(objective, []).append(flops / wall_s)
    return {objective: float(statistics.median(values)) for objective, values in rates.items()}
