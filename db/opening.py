"""Opening a store: one transaction's error mapping, and a schema made, checked or upgraded
before the first read or write. Functions of an engine, so that `Store` holds only the record."""

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from sqlalchemy import Connection, Engine, Insert, Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import InterfaceError, OperationalError, SQLAlchemyError

import db.migrations as migrations
import db.schema as schema
from db.engine import RACES
from db.errors import StoreError, StoreUnreachable, StoreURLError
from db.schema import SCHEMA_VERSION
from db.survey import Survey, survey_connection, survey_sqlite
from db.waits import Notify, lock_wait_s

__all__ = ["ensure_schema", "insert_for", "schema_transaction", "transaction"]

T = TypeVar("T")
FULL_BELOW_BYTES = 1 << 20  # less free space than this beside a store that failed to write: a full disk


@contextmanager
def transaction(engine: Engine, url: str) -> Iterator[Connection]:
    """One transaction: commits on success, rolls back on error; outside, a StoreError naming the
    (masked) `url`, or StoreUnreachable when the server did not answer (worth waiting out)."""
    try:
        with engine.begin() as connection:
            yield connection
    except SQLAlchemyError as error:
        reason = _in_words(engine, str(error.orig if getattr(error, "orig", None) else error).splitlines()[0])
        unreachable = isinstance(error, OperationalError | InterfaceError)  # not a bad row
        raise (StoreUnreachable if unreachable else StoreError)(f"store {url}: {reason}") from None


@contextmanager
def schema_transaction(engine: Engine, url: str) -> Iterator[Connection]:
    """A transaction that holds schema changes too: SQLite's driver autocommits each CREATE and
    ALTER TABLE outside one, so there it is begun explicitly (and takes the write lock at once)."""
    with transaction(engine, url) as connection:
        if engine.dialect.name == "sqlite":
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        yield connection


def _in_words(engine: Engine, reason: str) -> str:
    """The driver's reason, said plainly where SQLite's is cryptic: a lock another process held
    past the wait, or a disk that is full ('disk I/O error' is often that)."""
    if "database is locked" in reason:
        return (
            f"locked by another process for more than {lock_wait_s():g} s ({reason}); run the command again"
        )
    if engine.dialect.name == "sqlite" and ("disk is full" in reason or "disk I/O error" in reason):
        folder = Path(engine.url.database).resolve().parent
        free = shutil.disk_usage(folder).free
        if free < FULL_BELOW_BYTES:
            return f"the disk is full ({free:,} bytes free in {folder}; {reason}): free some space and rerun"
    return reason


def insert_for(engine: Engine, table: Table) -> Insert:
    """An INSERT with the dialect's ON CONFLICT."""
    dialect = sqlite if engine.dialect.name == "sqlite" else postgresql
    return dialect.insert(table)


def ensure_schema(engine: Engine, url: str, upgrade: bool, create: bool, notify: Notify = None) -> int | None:
    """Create a new store's tables; return the version an older store was upgraded from. A
    database that is not orch's (`db.survey`) is refused before anything is written to it."""
    found = _retrying(lambda: _survey(engine, url, notify)).schema_version(url)
    if found is None and not create:
        raise StoreURLError(f"store {url} holds no orch tables (an empty database); nothing was written")
    if found is None:
        _retrying(lambda: _create_schema(engine, url))
        return None
    if found > SCHEMA_VERSION:
        raise StoreError(
            f"store {url} was written by schema {found}, this orch reads {SCHEMA_VERSION}: upgrade orch"
        )
    if found == SCHEMA_VERSION:
        return None
    if not upgrade:
        raise StoreError(
            f"store {url} was written by schema {found}, this orch reads "
            f"{SCHEMA_VERSION}: run 'orch --store {url} db upgrade' (it keeps every row)"
        )
    with schema_transaction(engine, url) as connection:
        migrations.upgrade(connection, found)
    return found


def _retrying(action: Callable[[], T]) -> T | None:
    """Run `action`, retrying a few times: two processes may open or create one store at once
    (SQLite can answer 'database is locked' while the other switches to WAL or creates tables)."""
    for attempt in range(5):
        try:
            return action()
        except StoreError as error:
            if not any(race in str(error) for race in RACES) or attempt == 4:
                raise
            time.sleep(0.2 * 2**attempt)
    return None


def _survey(engine: Engine, url: str, notify: Notify) -> Survey:
    """What the database holds; a SQLite file read-only, before the engine (WAL) opens it."""
    if engine.dialect.name == "sqlite":
        return survey_sqlite(Path(engine.url.database), url, notify)
    with transaction(engine, url) as connection:
        return survey_connection(connection)


def _create_schema(engine: Engine, url: str) -> None:
    """The tables and the version row, committed together: another process surveying the store
    meanwhile sees nothing or all of it, never orch_meta without its row. create_all skips what
    exists, and the row is written once."""
    with schema_transaction(engine, url) as connection:
        schema.metadata.create_all(connection, checkfirst=True)
        connection.execute(
            insert_for(engine, schema.orch_meta)
            .values(key="schema", value=str(SCHEMA_VERSION))
            .on_conflict_do_nothing()
        )
