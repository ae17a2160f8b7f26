"""orch writes only into its own store: every command, on SQLite and on Postgres, refuses a
database that holds somebody else's tables in one line with exit 2, and leaves it as it was (the
file's sha256; the server's catalog and rows). A reader never creates a store."""

import hashlib
from pathlib import Path

import pytest
import yaml
from sqlalchemy import create_engine, text

from tests.cli import ROOT, one_error_line, orch

HEADER = "source,model,objective,metric,reference,eval_set,samples,value"


def commands(folder: Path) -> dict[str, list[str]]:
    """Every command that opens a store, with what it needs besides the store."""
    (folder / "b.csv").write_text(f"{HEADER}\npaper,m,ntp,cka,dino,wit,1M,0.1\n")
    raw = yaml.safe_load((ROOT / "sweeps/goodview_vs_ntp.yaml").read_text())
    raw["claims"] = str(ROOT / "sweeps" / raw["claims"])
    (folder / "s.yaml").write_text(yaml.safe_dump(raw))
    return {
        "sweep": ["sweep", str(folder / "s.yaml"), "--storage", str(folder / ".orch")],
        "status": ["status"],
        "fit": ["fit", "--out", str(folder / "reports")],
        "report": ["report", "--out", str(folder / "reports")],
        "export": ["export", "--out", str(folder / "export")],
        "baselines import": ["baselines", "import", str(folder / "b.csv")],
        "baselines list": ["baselines", "list"],
        "db upgrade": ["db", "upgrade"],
    }


def sqlite_theirs(folder: Path, *tables: str) -> tuple[str, Path]:
    import sqlite3

    path = folder / "theirs.db"
    with sqlite3.connect(path) as connection:  # a rollback-journal file: WAL would change its bytes
        for table in tables:
            connection.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name TEXT)")
            connection.execute(f"INSERT INTO {table} (name) VALUES ('theirs')")
    return f"sqlite:///{path}", path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("tables", [("people",), ("people", "sweeps")])
def test_every_command_refuses_a_sqlite_file_of_somebody_elses_and_leaves_its_bytes(tmp_path, tables):
    url, path = sqlite_theirs(tmp_path, *tables)
    before, siblings = sha256(path), sorted(p.name for p in tmp_path.iterdir())
    for name, args in commands(tmp_path).items():
        line = one_error_line(orch("--store", url, *args))
        assert f"holds tables that are not orch's ({', '.join(sorted(tables))})" in line, name
        assert sha256(path) == before, name  # not even switched to WAL
    assert not (tmp_path / "theirs.db-wal").exists() and not (tmp_path / "reports").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({*siblings, "b.csv", "s.yaml"})


def test_an_empty_file_is_refused_by_every_reader_and_db_upgrade_and_stays_empty(tmp_path):
    (tmp_path / "empty.db").write_bytes(b"")
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    for name, args in commands(tmp_path).items():
        if name in ("sweep", "baselines import"):
            continue  # writers: an empty database is theirs to make a store in
        line = one_error_line(orch("--store", url, *args))
        assert "holds no orch tables (an empty database); nothing was written" in line, (name, line)
        assert (tmp_path / "empty.db").stat().st_size == 0, name


def test_readers_never_create_a_store(tmp_path):
    url = f"sqlite:///{tmp_path / 'nowhere' / 'orch.db'}"
    for name, args in commands(tmp_path).items():
        if name in ("sweep", "baselines import"):
            continue
        assert "does not exist" in one_error_line(orch("--store", url, *args)), name
    assert not (tmp_path / "nowhere").exists()


def pg_catalog(url: str) -> list:
    """Every table of the public schema with its rows: what a command could have changed."""
    engine = create_engine(url)
    with engine.connect() as connection:
        names = connection.execute(
            text("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")
        ).scalars()
        found = [
            (name, connection.execute(text(f'SELECT * FROM "{name}" ORDER BY 1')).fetchall())
            for name in names
        ]
    engine.dispose()
    return sorted(found)


@pytest.mark.postgres
def test_every_command_refuses_a_postgres_database_of_somebody_elses_and_leaves_its_catalog(
    postgres_url, tmp_path
):
    engine = create_engine(postgres_url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT)"))
        connection.execute(text("CREATE TABLE sweeps (id INTEGER PRIMARY KEY, note TEXT)"))
        connection.execute(text("INSERT INTO people VALUES (1, 'theirs')"))
    engine.dispose()
    before = pg_catalog(postgres_url)
    for name, args in commands(tmp_path).items():
        line = one_error_line(orch("--store", postgres_url, *args))
        assert "holds tables that are not orch's (people, sweeps)" in line, name
        assert pg_catalog(postgres_url) == before, name
