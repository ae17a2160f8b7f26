"""How fast each objective has trained in a store: what a sweep orders its trials by."""

import statistics
from collections.abc import Iterable

import db.queries as queries
from db.store import Store

__all__ = ["training_rates"]


def training_rates(store: Store, objectives: Iterable[str]) -> dict[str, float]:
    """Training FLOP/s per objective, the median over its done trials in the store (the wall time
    holds the trial's evaluation too); objectives with none are left out."""
    rates: dict[str, list[float]] = {}
    with store.session_scope() as connection:
        for objective, flops, wall_s in connection.execute(queries.finished_training(list(objectives))):
            if flops and wall_s:
                rates.setdefault(objective, []).append(flops / wall_s)
    return {objective: float(statistics.median(values)) for objective, values in rates.items()}
