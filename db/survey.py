"""What a database holds before orch touches it: nothing, orch's own tables, or somebody else's.

orch writes only into its own store: an empty database, or one holding orch's `orch_meta` row
and no table orch did not make. Anything else is refused before a byte changes. A SQLite file is
surveyed through a read-only connection of its own, before the store's engine (which switches
the file to WAL) ever opens it; a Postgres database through the engine, which writes nothing.
"""

import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import Connection, inspect, select

import db.schema as schema
from db.errors import StoreError, StoreURLError
from db.waits import NOTICE_S, Notify, busy_notice, lock_wait_s

__all__ = ["ORCH_TABLES", "ForeignStore", "Survey", "survey_connection", "survey_sqlite"]

ORCH_TABLES = frozenset(schema.metadata.tables)
META_COLUMNS = {"key", "value"}  # orch_meta's, as orch makes it
SHOWN = 8  # foreign tables named in a refusal; the rest are counted


class ForeignStore(StoreURLError):
    """A database that is not orch's: refused before anything is written (bad input, exit 2)."""


@dataclass(frozen=True)
class Survey:
    tables: frozenset[str]  # every table the database holds, SQLite's own excepted
    version: str | None  # orch_meta's schema row as stored; None without one

    def schema_version(self, url: str) -> int | None:
        """The schema an orch store was written by; None for an empty database; ForeignStore
        for anything else, naming what makes it not orch's."""
        if not self.tables:
            return None
        foreign = sorted(self.tables - ORCH_TABLES) if "orch_meta" in self.tables else sorted(self.tables)
        if foreign:
            shown = ", ".join(foreign[:SHOWN]) + (
                f" and {len(foreign) - SHOWN} more" if len(foreign) > SHOWN else ""
            )
            raise ForeignStore(
                f"store {url} holds tables that are not orch's ({shown}); nothing was written: give orch "
                "a database or file of its own"
            )
        if self.version is None or not self.version.strip().isdigit():
            found = "none" if self.version is None else repr(self.version)
            raise ForeignStore(
                f"store {url}: orch_meta holds no schema version orch could have written "
                f"({found}); nothing was written: give orch a database or file of its own"
            )
        return int(self.version)


def survey_sqlite(path: Path, url: str, notify: Notify = None) -> Survey:
    """A SQLite file's tables and orch_meta version, read without writing a byte (a missing or
    0-byte file holds nothing). Another process's lock is waited out for `lock_wait_s()`, the
    wait said through `notify` every NOTICE_S."""
    if not path.exists() or path.stat().st_size == 0:
        return Survey(frozenset(), None)
    started, said = time.monotonic(), 0.0
    while True:
        try:
            return _read_tables(path)
        except sqlite3.OperationalError as error:
            waited = time.monotonic() - started
            if "locked" not in str(error) or waited > lock_wait_s():
                raise StoreError(f"store {url}: {_reason(error, waited)}") from None
            if notify is not None and waited - said >= NOTICE_S:
                said = waited
                notify(busy_notice(url, waited))
        except sqlite3.DatabaseError as error:
            raise StoreURLError(
                f"store {url} is not a SQLite database ({str(error).splitlines()[0]}); nothing was written"
            ) from None


def _read_tables(path: Path) -> Survey:
    """One read-only look (waiting a second at most for a lock)."""
    with closing(sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=1.0)) as db:
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        names = {name for name in names if not name.startswith("sqlite_")}
        version = None
        columns = {row[1] for row in db.execute("PRAGMA table_info(orch_meta)")}
        if columns >= META_COLUMNS:  # an orch_meta of another shape is somebody else's: no version
            found = db.execute("SELECT value FROM orch_meta WHERE key = 'schema'").fetchone()
            version = None if found is None else str(found[0])
    return Survey(frozenset(names), version)


def _reason(error: sqlite3.OperationalError, waited: float) -> str:
    reason = str(error).splitlines()[0]
    if "locked" in reason:
        return f"locked by another process for more than {waited:.0f} s ({reason}); run the command again"
    return reason


def survey_connection(connection: Connection) -> Survey:
    """The tables of the connection's schema and orch_meta's version (Postgres, or a SQLite file
    already known to be orch's)."""
    inspector = inspect(connection)
    names = frozenset(inspector.get_table_names())
    version = None
    if "orch_meta" in names and {c["name"] for c in inspector.get_columns("orch_meta")} >= META_COLUMNS:
        found = connection.execute(
            select(schema.orch_meta.c.value).where(schema.orch_meta.c.key == "schema")
        ).first()
        version = None if found is None else str(found.value)
    return Survey(names, version)
