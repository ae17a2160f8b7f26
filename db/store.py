"""`Store`: the SQL record of sweeps, trials and measurements, by URL (SQLite file or Postgres).

Every write is idempotent: a measurement's tuple (trial key, samples seen, metric, reference,
eval set) is unique and written with ON CONFLICT DO NOTHING, so a retried, resumed or resubmitted
trial can neither lose nor duplicate a row.
"""

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, bindparam, func, or_, select, update

import db.queries as queries
import db.schema as schema
from db.engine import engine_for, mask_url
from db.errors import NotFound, StoreError
from db.findings import Findings
from db.opening import ensure_schema, insert_for, transaction
from db.queries import as_frame, chunks
from db.rows import (
    CheckpointReport,
    Measurement,
    SweepRow,
    TrialInSweep,
    TrialMeasurement,
    TrialRow,
    TrialState,
    columns,
)
from db.status import ALLOWED_FROM, FINISHED, TrialStatus
from db.waits import Notify, watch_waits

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Store"]


class Store(Findings):
    """The record of sweeps, trials, measurements, baselines, fits, forecasts and gaps."""

    def __init__(self, url: str, upgrade: bool = False, create: bool = True, notify: Notify = None) -> None:
        self.url = mask_url(url)
        self._engine = engine_for(url, make_folder=create)
        watch_waits(self._engine, self.url, notify)
        self.upgraded_from = ensure_schema(self._engine, self.url, upgrade, create, notify)
        self._batch: Connection | None = None  # the open transaction of `batch()`

    @classmethod
    def open(cls, url: str, upgrade: bool = False, create: bool = True, notify: Notify = None) -> "Store":
        """The store at `url`, created when new (unless `create` is false: a reader refuses a
        database without orch's tables, and writes nothing); `upgrade` migrates an older one.
        A database that is not orch's is refused (`db.survey`); `notify` hears of long waits."""
        return cls(url, upgrade, create, notify)

    def close(self) -> None:
        self._engine.dispose()

    def session_scope(self) -> AbstractContextManager[Connection]:
        """One transaction: commits on success, rolls back on error, StoreError outside; inside
        `batch()`, the batch's transaction."""
        if self._batch is not None:
            return nullcontext(self._batch)
        return transaction(self._engine, self.url)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Every write inside is one transaction: all of them land, or none (the driver's writes
        between two flushes, so a sweep of many short trials pays one commit per flush)."""
        with transaction(self._engine, self.url) as connection:
            self._batch = connection
            try:
                yield
            finally:
                self._batch = None

    def _insert(self, table: schema.Table) -> Any:
        return insert_for(self._engine, table)

    # sweeps and trials -------------------------------------------------------------------

    def record_sweep(
        self, name: str, spec_text: str, spec_hash: str, source: str, trial_rows: Sequence[TrialRow]
    ) -> None:
        """Register a sweep and its trials (as pending where new); existing trials are kept."""
        now = time.time()
        with self.session_scope() as connection:
            sweep = {"name": name, "spec_text": spec_text, "spec_hash": spec_hash}
            connection.execute(
                self._insert(schema.sweeps)
                .values(**sweep, source=source, created=now, updated=now)
                .on_conflict_do_update(
                    index_elements=["name"],
                    set_={"spec_text": spec_text, "spec_hash": spec_hash, "updated": now},
                )
            )
            if not trial_rows:
                return
            new = {
                "status": TrialStatus.PENDING,
                "attempts": 0,
                "samples_seen": 0,
                "created": now,
                "updated": now,
            }
            trials = [
                {k: getattr(row, k) for k in columns(TrialRow) if k != "held_out"} | new for row in trial_rows
            ]
            connection.execute(self._insert(schema.trials).on_conflict_do_nothing(), trials)
            links = [
                {"sweep": name, "trial_key": row.key, "held_out": int(row.held_out)} for row in trial_rows
            ]
            upsert = self._insert(schema.sweep_trials)
            connection.execute(
                upsert.on_conflict_do_update(
                    index_elements=["sweep", "trial_key"], set_={"held_out": upsert.excluded.held_out}
                ),
                links,
            )

    # leases: one driver per trial at a time --------------------------------------------

    def claim(
        self, keys: Iterable[str], owner: str, stale_after_s: float, dead: Iterable[str] = ()
    ) -> set[str]:
        """Lease to `owner` each unfinished trial of `keys` that no live driver holds, and return
        the keys `owner` holds. A lease is a dead driver's when its heartbeat is older than
        `stale_after_s`, or when its owner is one of `dead`. Rows are locked in key order, so
        two drivers claiming at once cannot deadlock, and each trial goes to one of them."""
        t, now, dead = schema.trials.c, time.time(), list(dead)
        free = or_(t.lease_owner.is_(None), t.lease_owner == owner, t.lease_heartbeat < now - stale_after_s)
        free = or_(free, t.lease_owner.in_(dead)) if dead else free
        held: set[str] = set()
        with self.session_scope() as connection:
            for chunk in chunks(sorted(keys)):
                mine = t.key.in_(chunk) & t.status.notin_(FINISHED)
                connection.execute(select(t.key).where(mine).order_by(t.key).with_for_update())
                connection.execute(
                    update(schema.trials).where(mine & free).values(lease_owner=owner, lease_heartbeat=now)
                )
                held |= set(
                    connection.execute(select(t.key).where(mine & (t.lease_owner == owner))).scalars()
                )
        return held

    def lease_owners(self, keys: Iterable[str]) -> set[str]:
        """The drivers holding leases on any of `keys`."""
        t, owners = schema.trials.c, set()
        with self.session_scope() as connection:
            for chunk in chunks(list(keys)):
                found = connection.execute(select(t.lease_owner).where(t.key.in_(chunk)).distinct()).scalars()
                owners |= {owner for owner in found if owner}
        return owners

    def renew(self, owner: str, release: bool = False) -> None:
        """Beat `owner`'s heartbeat on every trial it holds, or, with `release`, let them go."""
        values = (
            {"lease_owner": None, "lease_heartbeat": None} if release else {"lease_heartbeat": time.time()}
        )
        with self.session_scope() as connection:
            connection.execute(
                update(schema.trials).where(schema.trials.c.lease_owner == owner).values(**values)
            )

    def find_trial(self, key: str) -> TrialState | None:
        with self.session_scope() as connection:
            row = connection.execute(select(schema.trials).where(schema.trials.c.key == key)).first()
        return TrialState(*row) if row else None

    def get_trial(self, key: str) -> TrialState:
        trial = self.find_trial(key)
        if trial is None:
            raise NotFound(f"trial {key[:10]}… not in {self.url}")
        return trial

    def trial_statuses(self, keys: Iterable[str]) -> dict[str, TrialStatus]:
        keys = list(keys)
        found: dict[str, TrialStatus] = {}
        with self.session_scope() as connection:
            for chunk in chunks(keys):
                query = select(schema.trials.c.key, schema.trials.c.status).where(
                    schema.trials.c.key.in_(chunk)
                )
                found.update({row.key: TrialStatus(row.status) for row in connection.execute(query)})
        return found

    def set_status(self, key: str, status: TrialStatus, reason: str | None = None, **fields: Any) -> None:
        """Move a trial to `status`; a move the life cycle forbids raises StoreError."""
        if status not in ALLOWED_FROM:
            raise StoreError(f"unknown trial status {status!r}")
        now = time.time()
        values: dict[str, Any] = {"status": status, "reason": reason, "updated": now, **fields}
        if status == TrialStatus.RUNNING:
            values["attempts"] = schema.trials.c.attempts + 1
            values["started"] = now
        else:
            values["finished"] = now
        with self.session_scope() as connection:
            result = connection.execute(
                update(schema.trials)
                .where(schema.trials.c.key == key)
                .where(schema.trials.c.status.in_(ALLOWED_FROM[status]))
                .values(**values)
            )
            if result.rowcount == 0:
                current = connection.execute(
                    select(schema.trials.c.status).where(schema.trials.c.key == key)
                ).scalar()
        if result.rowcount == 0:
            if current is None:
                raise NotFound(f"trial {key[:10]}… not in {self.url}")
            raise StoreError(f"trial {key[:10]}… is {current}; it cannot become {status}")

    def finish_imported(self, finished: Sequence[tuple[str, int, int | None]]) -> None:
        """Mark pending trials done as `orch import` records them: (key, last checkpoint,
        parameters or None), one statement for all, as one attempt on host 'imported'."""
        t, now = schema.trials.c, time.time()
        statement = (
            update(schema.trials)
            .where(t.key == bindparam("done_key"), t.status == TrialStatus.PENDING)
            .values(
                status=TrialStatus.DONE,
                attempts=t.attempts + 1,
                started=now,
                finished=now,
                updated=now,
                host="imported",
                device="-",
                samples_seen=bindparam("done_seen"),
                n_params=func.coalesce(bindparam("done_params"), t.n_params),
            )
        )
        rows = [{"done_key": k, "done_seen": seen, "done_params": params} for k, seen, params in finished]
        if rows:
            with self.session_scope() as connection:
                connection.execute(statement, rows)

    def note(self, key: str, reason: str) -> None:
        """Record why a trial is where it is (e.g. the error an attempt is retried after)."""
        with self.session_scope() as connection:
            connection.execute(
                update(schema.trials)
                .where(schema.trials.c.key == key)
                .values(reason=reason, updated=time.time())
            )

    def record_checkpoint(self, report: CheckpointReport) -> int:
        """Write a checkpoint's rows and the trial's progress in one transaction; returns rows added."""
        with self.session_scope() as connection:
            added = self._insert_measurements(connection, report.rows)
            connection.execute(
                update(schema.trials)
                .where(schema.trials.c.key == report.trial_key)
                .values(
                    samples_seen=report.samples_seen,
                    n_params=report.n_params,
                    host=report.host,
                    device=report.device,
                    updated=time.time(),
                )
            )
        return added

    # measurements ------------------------------------------------------------------------

    def write_measurements(self, rows: Sequence[Measurement]) -> int:
        """Insert rows, skipping any whose unique tuple is already stored; returns rows added."""
        with self.session_scope() as connection:
            return self._insert_measurements(connection, rows)

    def _insert_measurements(self, connection: Connection, rows: Sequence[Measurement]) -> int:
        if not rows:
            return 0
        result = connection.execute(
            self._insert(schema.measurements)
            .on_conflict_do_nothing(
                index_elements=["trial_key", "samples_seen", "metric", "reference", "eval_set"]
            )
            .returning(schema.measurements.c.id),
            [{name: getattr(row, name) for name in columns(Measurement)} for row in rows],
        )
        return len(result.all())

    def sweep_names(self) -> list[str]:
        with self.session_scope() as connection:
            query = select(schema.sweeps.c.name).order_by(schema.sweeps.c.created)
            return [row.name for row in connection.execute(query)]

    def find_sweep(self, name: str) -> SweepRow | None:
        with self.session_scope() as connection:
            row = connection.execute(select(schema.sweeps).where(schema.sweeps.c.name == name)).first()
        return SweepRow(*row) if row else None

    def trials_frame(self, sweep: str | None = None) -> "pd.DataFrame":
        """One row per trial (of one sweep, or all), with `sweep` and `held_out` where known."""
        return self._frame(queries.trials(sweep), TrialInSweep)

    def trial_states(self, sweep: str) -> list[TrialInSweep]:
        """The trials of one sweep as typed rows, without pandas (`orch status` starts fast)."""
        with self.session_scope() as connection:
            return [TrialInSweep(*row) for row in connection.execute(queries.trials(sweep))]

    def measurements_frame(self, sweep: str | None = None, metric: str | None = None) -> "pd.DataFrame":
        """Measurements (of one metric, or all) joined with their trial's columns (objective,
        model, data size, seed)."""
        return self._frame(queries.measurements(sweep, metric), TrialMeasurement)

    def measured(self, sweep: str) -> set[tuple[str, str]]:
        """The (metric, reference) pairs the sweep's trials measured."""
        with self.session_scope() as connection:
            return {tuple(row) for row in connection.execute(queries.measured(sweep))}

    def table_chunks(self, table: str, sweep: str, rows: int = 100_000) -> Iterator["pd.DataFrame"]:
        """One sweep's rows of an exported table (`queries.EXPORTED`), `rows` at a time, streamed
        from the server: memory stays flat in the table's size."""
        with self.session_scope() as connection:
            result = connection.execution_options(yield_per=rows).execute(queries.table(table, sweep))
            names = list(result.keys())
            for part in result.partitions():
                yield as_frame(names, part)

    def _frame(self, query: Any, row_type: type) -> "pd.DataFrame":
        """The query's rows as a frame whose columns are `row_type`'s fields, in order."""
        with self.session_scope() as connection:
            result = connection.execute(query)
            names = list(result.keys())
            if names != columns(row_type):
                raise StoreError(f"store {self.url}: query columns {names} are not {row_type.__name__}'s")
            return as_frame(names, result)

    def table_frame(self, table: str, sweep: str) -> "pd.DataFrame":
        """One sweep's rows of an exported table (`queries.EXPORTED`: forecasts, verdicts, ...)."""
        with self.session_scope() as connection:
            result = connection.execute(queries.table(table, sweep))
            return as_frame(list(result.keys()), result)
