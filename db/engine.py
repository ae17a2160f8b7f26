"""Opening a store by URL: the engine for SQLite (WAL, busy timeout, foreign keys) or Postgres,
the errors a store raises, and the masked URL that is all orch ever prints or logs."""

import re
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from db.errors import StoreURLError
from db.waits import lock_wait_s

__all__ = [
    "RACES",
    "engine_for",
    "mask_text",
    "mask_url",
]


CONNECT_TIMEOUT_S = 10  # seconds a Postgres server has to answer a new connection

# What a store answers when another process opens or creates it at the same moment.
RACES = ("database is locked", "already exists", "duplicate key")


# Query parameters that carry a secret (libpq's names); their values are masked like a password.
SECRET_PARAMETERS = ("password", "passfile", "sslpassword", "sslkey")


def mask_url(url: str) -> str:
    """The URL with every secret replaced by ***, for anything printed, logged or stored: the
    password of its user info, however it is written (an unescaped '@' in it included: the host
    starts after the last '@'), and any secret query parameter."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        return "<unparseable store URL>"
    user_info, at, location = rest.rpartition("@")
    if at:
        user, colon, _ = user_info.partition(":")
        rest = f"{user}{':***' if colon else ''}@{location}"
    address, question, query = rest.partition("?")
    if question:
        query = "&".join(_mask_parameter(pair) for pair in query.split("&"))
    return f"{scheme}://{address}{question}{query}"


URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"]+")


def mask_text(text: str) -> str:
    """Every URL in a text (a sweep file's `store:` line) masked as `mask_url` masks it."""
    return URL_IN_TEXT.sub(lambda match: mask_url(match.group(0)), text)


def _mask_parameter(pair: str) -> str:
    name, equals, _ = pair.partition("=")
    return f"{name}=***" if equals and name.lower() in SECRET_PARAMETERS else pair


def engine_for(url: str, make_folder: bool = True) -> Engine:
    """The engine for a store URL (nothing is opened yet); a SQLite store's folder is made when
    `make_folder` (a writer), and a reader's store file must exist."""
    _check_user_info(url)
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreURLError(
            f"{mask_url(url)!s}: not a store URL (write sqlite:///orch.db or "
            "postgresql+psycopg://user@host/db)"
        ) from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise StoreURLError(
                f"{mask_url(url)}: an in-memory store keeps nothing after the command (give a file: "
                "sqlite:///orch.db)"
            )
        path = Path(parsed.database).expanduser()
        if not make_folder and not path.is_file():
            raise StoreURLError(
                f"store {mask_url(url)} does not exist (nothing to read; nothing was written)"
            )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            why = "a file is in the way" if isinstance(error, FileExistsError) else error.strerror
            raise StoreURLError(f"{mask_url(url)}: cannot make its folder {path.parent} ({why})") from None
        engine = create_engine(parsed, connect_args={"timeout": lock_wait_s()})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    if parsed.drivername == "postgresql+psycopg":
        # A host that accepts connections and never answers must not hang a command: libpq's
        # connect_timeout, unless the URL sets its own (?connect_timeout=N).
        waits = {} if "connect_timeout" in parsed.query else {"connect_timeout": CONNECT_TIMEOUT_S}
        waits["options"] = f"-c lock_timeout={lock_wait_s() * 1000:.0f}"  # a lock is waited for, not forever
        return create_engine(parsed, pool_pre_ping=True, connect_args=waits)
    raise StoreURLError(
        f"{mask_url(url)}: unsupported database '{parsed.drivername}' "
        "(use sqlite:///FILE or postgresql+psycopg://user@host/db)"
    )


def _check_user_info(url: str) -> None:
    """An '@' inside the password must be escaped (%40): unescaped, the driver would read the
    password's tail as the host, and its error would print it."""
    rest = url.partition("://")[2]
    address = rest.split("?", 1)[0].rsplit("/", 1)[0]
    if address.count("@") > 1:
        raise StoreURLError(
            f"{mask_url(url)}: the user name or password holds an unescaped '@' (write it as %40)"
        )


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={lock_wait_s() * 1000:.0f}")  # first: the switch to WAL waits too
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
