"""The store's read queries, built once here and run by `Store`: a sweep's trials, its
measurements joined with their trials, what it measured, the end of each done trial's training,
and the rows `orch export` writes; and how their rows become frames."""

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, select

import db.schema as schema
from db.status import TrialStatus

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EXPORTED",
    "as_frame",
    "chunks",
    "finished_training",
    "measured",
    "measurements",
    "table",
    "trials",
]

EXPORTED = ("trials", "measurements", "fits", "forecasts", "gaps", "verdicts")  # what `orch export` writes


def trials(sweep: str | None) -> Select:
    """One row per trial (of one sweep, or all), with `sweep` and `held_out`: `TrialState`."""
    t, st = schema.trials, schema.sweep_trials
    query = select(t, st.c.sweep, st.c.held_out).join(st, st.c.trial_key == t.c.key)
    if sweep is not None:
        query = query.where(st.c.sweep == sweep)
    return query.order_by(t.c.created, t.c.key)


def measurements(sweep: str | None, metric: str | None) -> Select:
    """Measurements (of one metric, or all) with their trial's columns: `TrialMeasurement`."""
    m, t, st = schema.measurements, schema.trials, schema.sweep_trials
    trial_columns = (t.c.objective, t.c.model, t.c.n_params, t.c.data_size, t.c.seed, t.c.budget_samples)
    query = (
        select(*(c for c in m.c if c.name != "id"), *trial_columns, t.c.status, st.c.sweep, st.c.held_out)
        .join(t, t.c.key == m.c.trial_key)
        .join(st, st.c.trial_key == t.c.key)
    )
    if sweep is not None:
        query = query.where(st.c.sweep == sweep)
    if metric is not None:
        query = query.where(m.c.metric == metric)
    return query.order_by(m.c.trial_key, m.c.samples_seen, m.c.metric)


def measured(sweep: str) -> Select:
    """The distinct (metric, reference) pairs a sweep's trials scored; its training rows (loss,
    tokens and positions per sample: no reference) are no score to fit or claim."""
    m, st = schema.measurements, schema.sweep_trials
    query = select(m.c.metric, m.c.reference).join(st, st.c.trial_key == m.c.trial_key)
    return query.where(st.c.sweep == sweep, m.c.metric.notin_(schema.TRAINING_ROWS)).distinct()


def finished_training(objectives: Sequence[str]) -> Select:
    """(objective, FLOPs, wall seconds) at the end of every done trial of these objectives: its
    final training-loss row, whose FLOPs and wall time are the whole trial's."""
    m, t = schema.measurements, schema.trials
    query = select(t.c.objective, m.c.flops, m.c.wall_s).join(t, t.c.key == m.c.trial_key)
    return query.where(
        t.c.status == TrialStatus.DONE.value,
        t.c.objective.in_(objectives),
        m.c.metric == schema.TRAIN_LOSS,
        m.c.samples_seen == t.c.budget_samples,
    )


def table(name: str, sweep: str) -> Select:
    """One sweep's rows of an exported table, in a stable order."""
    if name == "trials":
        return trials(sweep)
    if name == "measurements":
        return measurements(sweep, None)
    results = schema.metadata.tables[name]
    return select(results).where(results.c.sweep == sweep).order_by(results.c.id)


def as_frame(names: list[str], rows: Iterable[Any]) -> "pd.DataFrame":
    """Rows as a frame, built column by column (pandas would probe each SQLAlchemy Row for
    namedtuple fields, a hundred times slower)."""
    import pandas as pd  # imported here so that the CLI starts without it

    values = zip(*rows, strict=True) if names else ()
    return pd.DataFrame(dict(zip(names, map(list, values), strict=False)), columns=names)


def chunks(keys: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    """Keys in slices small enough for one IN (...) on every backend."""
    return (keys[start : start + size] for start in range(0, len(keys), size))
