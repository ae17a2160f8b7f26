"""What is recorded beside the trials' own rows: published baselines, each `orch fit` run (fits,
forecasts, gaps, verdicts), the rounds of `orch sweep --until-decided` and what a sweep's trials
were scored against (`remember`). `Store` holds these
methods (`Findings` is one of its bases), so they share its transactions."""

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select, update

import db.schema as schema
from db.queries import as_frame
from db.rows import BaselineRow, FitRow, ForecastRow, GapRow, RoundRow, VerdictRow

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Findings"]


class Findings:
    """The store's methods for baselines, fit runs and rounds (a base of `Store`)."""

    session_scope: Callable[[], AbstractContextManager[Connection]]
    _insert: Callable[[schema.Table], Any]

    def write_baselines(self, rows: Sequence[BaselineRow]) -> int:
        """Add the curve points the store lacks (samples included); return how many."""
        key = [schema.baselines.c[name] for name in schema.BASELINE_KEY]
        with self.session_scope() as connection:
            seen = {tuple(row) for row in connection.execute(select(*key))}
            new = {tuple(getattr(row, name) for name in schema.BASELINE_KEY): row for row in rows}
            if fresh := [asdict(row) for point, row in new.items() if point not in seen]:
                connection.execute(schema.baselines.insert(), fresh)
            return len(fresh)

    def baselines_frame(self) -> "pd.DataFrame":
        with self.session_scope() as connection:
            result = connection.execute(select(schema.baselines).order_by(schema.baselines.c.id))
            return as_frame(list(result.keys()), result)

    def write_fit_run(
        self,
        fits: Sequence[tuple[FitRow, Sequence[ForecastRow]]],
        gap_rows: Sequence[GapRow],
        verdict_rows: Sequence[VerdictRow] = (),
    ) -> None:
        """Store one `orch fit` run in one transaction: each fit with its forecasts, the gaps,
        the verdicts."""
        with self.session_scope() as connection:
            for fit_row, forecast_rows in fits:
                fit_id = connection.execute(
                    schema.fits.insert().values(**asdict(fit_row)).returning(schema.fits.c.id)
                ).scalar_one()
                if forecast_rows:
                    connection.execute(
                        schema.forecasts.insert(),
                        [{**asdict(row), "fit_id": fit_id} for row in forecast_rows],
                    )
            for table, rows in ((schema.gaps, gap_rows), (schema.verdicts, verdict_rows)):
                if rows:
                    connection.execute(table.insert(), [asdict(row) for row in rows])

    def start_round(self, row: RoundRow) -> None:
        """Record a round before its runs start; a round already recorded is kept as it was
        (a rerun runs the recorded picks, never new ones)."""
        with self.session_scope() as connection:
            connection.execute(self._insert(schema.rounds).values(**asdict(row)).on_conflict_do_nothing())

    def finish_round(self, sweep: str, number: int, after: str) -> None:
        """The round's runs landed: what each claim's interval is now (JSON)."""
        rounds = schema.rounds
        with self.session_scope() as connection:
            connection.execute(
                update(rounds)
                .where(rounds.c.sweep == sweep, rounds.c.round == number)
                .values(after=after, finished=time.time())
            )

    def rounds(self, sweep: str) -> list[RoundRow]:
        """The sweep's rounds, in order."""
        rounds = schema.rounds
        with self.session_scope() as connection:
            query = select(rounds).where(rounds.c.sweep == sweep).order_by(rounds.c.round)
            return [RoundRow(*row) for row in connection.execute(query)]

    def remember(self, key: str, value: str, replace: bool) -> str:
        """Keep `value` under `key` (over an earlier value only when `replace`); the value kept."""
        meta = schema.orch_meta
        with self.session_scope() as connection:
            insert = self._insert(meta).values(key=key, value=value)
            if replace:
                connection.execute(
                    insert.on_conflict_do_update(index_elements=["key"], set_={"value": value})
                )
            else:
                connection.execute(insert.on_conflict_do_nothing())
            return connection.execute(select(meta.c.value).where(meta.c.key == key)).scalar_one()
