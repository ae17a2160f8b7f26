"""A store password, in every form a URL can hold it, never reaches an output, a log, a report,
the store, `.orch/` or the Ray session folder: a whole sweep as a real subprocess (its Ray
session's logs are searched too) and every reader in this process (`tests.cli`), against the CI's
Postgres, then everything they wrote is searched for it."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from sqlalchemy import MetaData, create_engine, select
from sqlalchemy.engine import make_url

from tests.cli import orch as orch_here
from tests.drivers import sweep_raw

pytestmark = pytest.mark.processes  # real processes: run by .ci/run after the README's command

ROOT = Path(__file__).resolve().parents[3]
PLANTED = ("Planted-Passfile", "Planted-SSL-Key")  # query parameters masked like a password


def forms(url: str) -> tuple[str, str]:
    """The store's URL with its password in the user info, and in the query string beside a
    passfile and an sslkey (paths that do not exist: libpq ignores them here)."""
    parsed = make_url(url)
    in_query = parsed.set(password=None).update_query_dict(
        {
            "password": parsed.password,
            "passfile": f"/nonexistent/{PLANTED[0]}",
            "sslkey": f"/nonexistent/{PLANTED[1]}",
        }
    )
    return url, in_query.render_as_string(hide_password=False)


def orch_process(folder: Path, *args: str, env: dict) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, **env},
        timeout=600,
    )
    return result.stdout + result.stderr


def orch(folder: Path, *args: str, env: dict) -> str:
    result = orch_here(*args, cwd=folder, env=env)
    return result.stdout + result.stderr


def holding(folder: Path, secrets: list[str]) -> list[str]:
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            raw = path.read_bytes()
            found += [f"{path}: {s}" for s in secrets if s.encode() in raw]
    return found


def stored_text(url: str) -> str:
    """Every row of every table of the store, as text."""
    engine = create_engine(url)
    tables = MetaData()
    tables.reflect(engine)
    with engine.connect() as connection:
        text = "\n".join(
            str(row) for table in tables.sorted_tables for row in connection.execute(select(table))
        )
    engine.dispose()
    return text


@pytest.mark.postgres
def test_no_form_of_a_store_password_is_shown_or_stored_anywhere(tmp_path, postgres_url):
    password = make_url(postgres_url).password
    assert password, "the CI's Postgres URL carries a password"
    secrets = [password, *PLANTED]
    in_userinfo, in_query = forms(postgres_url)
    ray_dir = Path(f"/tmp/orch-ray-s{os.getpid()}")
    raw = sweep_raw(name="secret", sizes=("2K",), seeds=(0,)) | {"store": in_query}  # the file's store line
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(raw))
    env = {"ORCH_RAY_TEMP_DIR": str(ray_dir)}
    outputs = [orch_process(tmp_path, "sweep", "s.yaml", "--num-cpus", "2", env=env)]
    assert "sweep secret: 2 done" in outputs[0], outputs[0]
    readers = [
        ("status", "--json"),
        ("status", "s.yaml"),
        ("fit", "--out", "reports", "--json"),
        ("report", "--out", "reports"),
        ("export", "--out", "exported"),
        ("baselines", "import", str(ROOT / "sweeps/published/jepa_prh.csv")),
        ("baselines", "list", "--json"),
    ]
    for url in (in_userinfo, in_query):
        outputs += [orch(tmp_path, *args, env={"ORCH_STORE": url}) for args in readers]
        missing = make_url(url).set(database="orch_no_such_db").render_as_string(hide_password=False)
        outputs.append(orch(tmp_path, "--store", missing, "status", env={}))  # an error that names the URL
        outputs.append(orch(tmp_path, "sweep", "s.yaml", "--dry-run", "--json", env={"ORCH_STORE": url}))
    assert any("orch_no_such_db" in output and "***" in output for output in outputs)
    try:
        leaks = [f"output {i}: {s}" for i, output in enumerate(outputs) for s in secrets if s in output]
        (tmp_path / "s.yaml").unlink()  # the user's own file holds the password by the user's choice
        leaks += holding(tmp_path, secrets)  # reports, exports, .orch/ (checkpoints, Tune's files)
        leaks += holding(ray_dir, secrets)  # Ray's session: logs of the driver, raylet and workers
        leaks += [f"store: {s}" for s in secrets if s in stored_text(postgres_url)]
    finally:
        shutil.rmtree(ray_dir, ignore_errors=True)
    assert leaks == []
