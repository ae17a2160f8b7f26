"""How a store written by an older schema reaches `SCHEMA_VERSION`, one version at a time.

`orch db upgrade` runs these; every other command refuses an older store with that command in
its message, so nothing is changed behind a user's back. SQLite does not enforce string widths,
so there a widening step changes nothing; Postgres alters the column type. New columns are
nullable: rows written before them keep NULL there.
"""

from dataclasses import dataclass

from sqlalchemy import Connection, insert, inspect, select, text, update

import db.schema as schema

__all__ = ["STEPS", "AddColumn", "CreateTable", "Rebuild", "ToBigInt", "Widen", "upgrade"]


@dataclass(frozen=True)
class Widen:
    """A string column made wider: `old` and `new` are its widths before and after."""

    table: str
    column: str
    old: int
    new: int

    def statement(self, width: int) -> str:
        return f"ALTER TABLE {self.table} ALTER COLUMN {self.column} TYPE VARCHAR({width})"

    def apply(self, connection: Connection) -> None:
        if connection.dialect.name == "postgresql":
            connection.execute(text(self.statement(self.new)))


@dataclass(frozen=True)
class AddColumn:
    """A nullable column (FLOAT unless `sql_type` says otherwise) added to a table."""

    table: str
    column: str
    sql_type: str = "FLOAT"

    def apply(self, connection: Connection) -> None:
        if self.column in _columns(connection, self.table):  # made whole by an earlier Rebuild
            return
        connection.execute(text(f"ALTER TABLE {self.table} ADD COLUMN {self.column} {self.sql_type}"))


@dataclass(frozen=True)
class ToBigInt:
    """An integer column made 64-bit (SQLite's INTEGER already is; Postgres alters the type)."""

    table: str
    column: str

    def apply(self, connection: Connection) -> None:
        if connection.dialect.name == "postgresql":
            connection.execute(text(f"ALTER TABLE {self.table} ALTER COLUMN {self.column} TYPE BIGINT"))


@dataclass(frozen=True)
class CreateTable:
    """A table new in this version, made from today's schema."""

    table: str

    def apply(self, connection: Connection) -> None:
        schema.metadata.tables[self.table].create(connection)


@dataclass(frozen=True)
class Rebuild:
    """A table made again from today's schema, rows copied in id order (SQLite cannot alter a
    constraint in place): for a unique key that changed. Columns of a later version start NULL
    (their AddColumn steps then find them made)."""

    table: str

    def apply(self, connection: Connection) -> None:
        target = schema.metadata.tables[self.table]
        old = f"{self.table}_before_upgrade"
        before = _columns(connection, self.table)
        connection.execute(text(f"ALTER TABLE {self.table} RENAME TO {old}"))
        target.create(connection)
        names = [c.name for c in target.columns if c.name != "id" and c.name in before]
        source = select(*(text(name) for name in names)).select_from(text(old)).order_by(text("id"))
        connection.execute(insert(target).from_select(names, source))
        connection.execute(text(f"DROP TABLE {old}"))


def _columns(connection: Connection, table: str) -> set[str]:
    return {column["name"] for column in inspect(connection).get_columns(table)}


def _widen(tables: tuple[str, ...], column: str, old: int, kind: str) -> tuple[Widen, ...]:
    return tuple(Widen(table, column, old, schema.WIDTHS[kind]) for table in tables)


CURVES = ("fits", "forecasts")
# STEPS[v] takes a store from version v to v + 1.
COUNTS = (  # sample counts up to 10^13 (and the parameter count) need 64 bits
    ("trials", "n_params"),
    ("trials", "data_size"),
    ("trials", "budget_samples"),
    ("trials", "samples_seen"),
    ("measurements", "samples_seen"),
    ("measurements", "step"),
)
STEPS: dict[int, tuple[Widen | AddColumn | ToBigInt | Rebuild | CreateTable, ...]] = {
    1: (  # one width per kind of name (objective 32 vs 64, reference 64 vs 128, ...)
        *_widen(("trials", *CURVES), "objective", 32, "objective"),
        *_widen(("trials", *CURVES, "gaps"), "model", 32, "model"),
        *_widen(("measurements", *CURVES, "gaps"), "reference", 64, "reference"),
        *_widen(("measurements", "baselines", *CURVES), "eval_set", 64, "eval_set"),
        *_widen(("gaps",), "faster", 32, "objective"),
        *_widen(("gaps",), "slower", 32, "objective"),
    ),
    2: tuple(AddColumn("measurements", column) for column in schema.MEASUREMENT_NOISE),  # noise, null
    3: tuple(ToBigInt(table, column) for table, column in COUNTS),
    4: (Rebuild("baselines"),),  # unique on the whole curve point, samples included
    5: (  # a trial's lease: which driver runs it, and when that driver last said so
        AddColumn("trials", "lease_owner", f"VARCHAR({schema.WIDTHS['host']})"),
        AddColumn("trials", "lease_heartbeat"),
    ),
    6: (CreateTable("verdicts"),),  # claims' verdicts, stored with their fit run
    7: (  # what the fit knew of a gap: identifiable, why not, its bound, its fit run
        AddColumn("gaps", "identifiable", "INTEGER"),
        AddColumn("gaps", "reasons", "TEXT"),
        AddColumn("gaps", "bound_side", f"VARCHAR({schema.WIDTHS['side']})"),
        AddColumn("gaps", "bound_ratio"),
        AddColumn("gaps", "fit_run", f"VARCHAR({schema.WIDTHS['fit_run']})"),
    ),
    8: (  # a measured baseline: its noise and null, and its features' sidecar
        *(AddColumn("baselines", column) for column in schema.MEASUREMENT_NOISE),
        AddColumn("baselines", "sidecar_sha256", "TEXT"),
    ),
    9: (CreateTable("rounds"),),  # `orch sweep --until-decided`: each round's picks and widths
}


def upgrade(connection: Connection, found: int) -> None:
    """Apply every step from version `found` to `SCHEMA_VERSION` in the caller's transaction."""
    for version in range(found, schema.SCHEMA_VERSION):
        for step in STEPS[version]:
            step.apply(connection)
        connection.execute(
            update(schema.orch_meta).where(schema.orch_meta.c.key == "schema").values(value=str(version + 1))
        )
