"""The store on SQLite and Postgres: idempotent writes, concurrent writers, the trial life cycle,
the schema version check and password masking."""

import multiprocessing
import socket
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import create_engine, event, text

from db import (
    SCHEMA_VERSION,
    WIDTHS,
    BaselineRow,
    CheckpointReport,
    NotFound,
    RoundRow,
    Store,
    StoreError,
    StoreURLError,
    mask_text,
    mask_url,
)
from db.engine import engine_for
from db.migrations import STEPS
from db.opening import ensure_schema
from db.rates import training_rates
from db.survey import survey_sqlite
from tests.rows import measurement, trial_row


def test_measurement_written_twice_is_one_row(store_url):
    store = Store.open(store_url)
    store.record_sweep("s", "name: s", "h", "s.yaml", [trial_row("k1")])
    assert store.write_measurements([measurement("k1", 1024)]) == 1
    assert store.write_measurements([measurement("k1", 1024, value=0.9)]) == 0
    frame = store.measurements_frame("s")
    assert len(frame) == 1
    assert frame.iloc[0]["value"] == pytest.approx(0.1)  # the first write stands
    assert frame.iloc[0]["objective"] == "ntp"  # trial columns are joined


def test_training_rates_are_the_median_flop_rate_of_each_objectives_done_trials(store_url):
    store = Store.open(store_url)
    trials = [trial_row(f"n{i}", objective="ntp", seed=i) for i in range(3)]
    trials += [trial_row("j0", objective="jepa_good"), trial_row("r0", objective="jepa_good", seed=1)]
    store.record_sweep("s", "name: s", "h", "s.yaml", trials)
    for key, wall_s in [("n0", 10.0), ("n1", 20.0), ("n2", 40.0), ("j0", 5.0), ("r0", 1.0)]:
        final = measurement(
            key, 4000, metric="train_loss", reference="", eval_set="train", flops=4e10, wall_s=wall_s
        )
        early = measurement(
            key, 1000, metric="train_loss", reference="", eval_set="train", flops=1e10, wall_s=0.1
        )
        store.write_measurements([early, final])
        store.set_status(key, "running", host="h", device="cpu")
        if key != "r0":  # still running: its rate is not known yet
            store.set_status(key, "done")
    assert training_rates(store, ["ntp", "jepa_good", "jepa_bad"]) == {"ntp": 2e9, "jepa_good": 8e9}


def test_recording_a_sweep_twice_keeps_trial_state(store_url):
    store = Store.open(store_url)
    store.record_sweep("s", "a", "h1", "s.yaml", [trial_row("k1")])
    store.set_status("k1", "running", host="h", device="cpu")
    store.set_status("k1", "done")
    store.record_sweep("s", "b", "h2", "s.yaml", [trial_row("k1"), trial_row("k2", seed=1)])
    assert store.trial_statuses(["k1", "k2"]) == {"k1": "done", "k2": "pending"}
    assert store.find_sweep("s").spec_hash == "h2"
    # the same trial in a second sweep is one trial
    store.record_sweep("t", "c", "h3", "t.yaml", [trial_row("k1")])
    assert len(store.trials_frame("t")) == 1
    assert store.trials_frame("t").iloc[0]["status"] == "done"


def test_a_round_is_recorded_once_and_finished_in_place(store_url):
    """`orch sweep --until-decided`: a rerun that records its round again keeps the first
    record (its picks), and finishing it adds what the claims read after it."""
    store = Store.open(store_url)
    store.record_sweep("s", "a", "h1", "s.yaml", [trial_row("k1")])
    first = RoundRow("s", 1, '[{"seed": 3}]', 2.5e12, 1e13, 0.99, "{}", '{"c": 0.1}', None, 1.0, None)
    store.start_round(first)
    store.start_round(RoundRow("s", 1, '[{"seed": 4}]', 9e12, 1e13, 0.99, "{}", "{}", None, 2.0, None))
    assert store.rounds("s") == [first]
    store.finish_round("s", 1, '{"c": {"width": 0.08}}')
    (finished,) = store.rounds("s")
    assert finished.after == '{"c": {"width": 0.08}}' and finished.finished is not None
    assert finished.runs == first.runs and store.rounds("t") == []


def test_status_life_cycle(store_url):
    store = Store.open(store_url)
    store.record_sweep("s", "a", "h", "s.yaml", [trial_row("k1"), trial_row("k2", seed=1)])
    store.set_status("k1", "running", host="node-1", device="cpu")
    store.set_status("k1", "running", host="node-1", device="cpu")  # a retry
    store.set_status("k1", "collapsed", reason="embedding std 1e-5 < 1e-3")
    trial = store.get_trial("k1")
    assert (trial.status, trial.attempts, trial.host) == ("collapsed", 2, "node-1")
    assert trial.reason.startswith("embedding std")
    with pytest.raises(StoreError, match="is collapsed; it cannot become done"):
        store.set_status("k1", "done")
    with pytest.raises(StoreError, match="it cannot become done"):
        store.set_status("k2", "done")  # pending -> done skips running
    store.set_status("k2", "running")
    store.set_status("k2", "interrupted", reason="SIGINT")
    store.set_status("k2", "running")
    store.set_status("k2", "failed", reason="ValueError: boom")
    assert store.get_trial("k2").attempts == 2
    with pytest.raises(NotFound, match="not in"):
        store.get_trial("missing")
    assert store.find_trial("missing") is None


def test_a_batch_of_writes_lands_whole_or_not_at_all(store_url):
    store = Store.open(store_url)
    store.record_sweep("s", "a", "h", "s.yaml", [trial_row("k1"), trial_row("k2", seed=1)])
    with store.batch():
        store.set_status("k1", "running")
        store.write_measurements([measurement("k1", 1024)])
        store.set_status("k1", "done")
    assert store.get_trial("k1").status == "done" and len(store.measurements_frame("s")) == 1
    with pytest.raises(StoreError, match="it cannot become done"), store.batch():
        store.set_status("k2", "running")
        store.write_measurements([measurement("k2", 1024)])
        store.set_status("k2", "done")
        store.set_status("k2", "done")  # done -> done: the whole batch is rolled back
    assert store.get_trial("k2").status == "pending" and len(store.measurements_frame("s")) == 1
    store.set_status("k2", "running")  # the store is usable after a failed batch
    assert store.get_trial("k2").attempts == 1


def _writer(url: str, worker: int, barrier) -> None:
    store = Store.open(url)
    barrier.wait()
    for step in range(60):
        shared = measurement("k1", 1024 * (step + 1))  # both processes write these
        own = measurement("k2", 1024 * (step + 1), metric=f"cka/w{worker}")
        store.record_checkpoint(CheckpointReport("k1", step, "running", None, 10, "h", "cpu", (shared, own)))


def test_two_processes_lose_and_duplicate_nothing(store_url):
    store = Store.open(store_url)
    store.record_sweep("s", "a", "h", "s.yaml", [trial_row("k1"), trial_row("k2", seed=1)])
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    workers = [context.Process(target=_writer, args=(store_url, w, barrier)) for w in (0, 1)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
        assert process.exitcode == 0
    frame = store.measurements_frame("s")
    assert len(frame) == 60 + 2 * 60
    assert not frame.duplicated(["trial_key", "samples_seen", "metric"]).any()


def test_two_processes_create_one_store(tmp_path):
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    workers = [context.Process(target=_open_and_write, args=(url, barrier)) for _ in range(2)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=120)
        assert process.exitcode == 0
    assert len(Store.open(url).trials_frame()) == 1


def _open_and_write(url: str, barrier) -> None:
    barrier.wait()
    Store.open(url).record_sweep("s", "a", "h", "s.yaml", [trial_row("k1")])


def test_a_store_being_created_is_seen_empty_or_whole(tmp_path):
    """Another process surveying the file while the tables are made sees no table, never
    orch_meta without its version row (which it would refuse as not orch's)."""
    path = tmp_path / "fresh.db"
    url = f"sqlite:///{path}"
    engine = engine_for(url)
    seen = []

    def survey_before_the_version_row(_connection, _cursor, statement, *_args) -> None:
        if statement.startswith("INSERT INTO orch_meta"):
            seen.append(survey_sqlite(path, url).tables)

    event.listen(engine, "before_cursor_execute", survey_before_the_version_row)
    ensure_schema(engine, url, upgrade=False, create=True)
    assert seen == [frozenset()]  # the version row and the tables commit together
    assert survey_sqlite(path, url).schema_version(url) == SCHEMA_VERSION


def test_newer_schema_is_refused_with_the_fix(store_url):
    Store.open(store_url).close()
    engine = create_engine(store_url.replace("postgresql+psycopg", "postgresql+psycopg"))
    with engine.begin() as connection:
        connection.execute(text("UPDATE orch_meta SET value = '99' WHERE key = 'schema'"))
    engine.dispose()
    with pytest.raises(
        StoreError, match=f"written by schema 99, this orch reads {SCHEMA_VERSION}: upgrade orch"
    ):
        Store.open(store_url)


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("postgresql+psycopg://orch:s3cret@db:5432/x", "postgresql+psycopg://orch:***@db:5432/x"),
        ("postgresql+psycopg://u:p@ssW0rd@127.0.0.1:5432/d", "postgresql+psycopg://u:***@127.0.0.1:5432/d"),
        (
            "postgresql://u@h/d?password=s3cret&sslmode=require",
            "postgresql://u@h/d?password=***&sslmode=require",
        ),
        ("postgresql://u@h/d?sslkey=/k.pem&PassFile=/p", "postgresql://u@h/d?sslkey=***&PassFile=***"),
        ("sqlite:////abs/orch.db", "sqlite:////abs/orch.db"),
        ("not a url", "<unparseable store URL>"),
    ],
)
def test_every_secret_of_a_url_is_masked(url, masked):
    assert mask_url(url) == masked


def test_every_url_in_a_sweep_file_is_masked():
    text = "name: s\nstore: postgresql+psycopg://u:p@ss@db/x?password=q  # the store\ngrid: {}\n"
    assert (
        mask_text(text)
        == "name: s\nstore: postgresql+psycopg://u:***@db/x?password=***  # the store\ngrid: {}\n"
    )


def test_password_is_masked(store_url):
    store = Store.open(store_url)
    assert "orch-ci-secret" not in store.url
    bad = "postgresql+psycopg://orch:s3cret@127.0.0.1:1/x"
    with pytest.raises(StoreError) as caught:
        Store.open(bad)
    assert "s3cret" not in str(caught.value)


def test_unsupported_url_is_bad_input():
    with pytest.raises(StoreURLError, match="unsupported database 'mysql'"):
        Store.open("mysql://u:pw@h/db")
    with pytest.raises(StoreURLError, match="not a store URL"):
        Store.open("not a url")


def test_baselines_import_is_idempotent(store_url):
    store = Store.open(store_url)
    row = BaselineRow(
        **{
            "source": "paper, Table 3",
            "model": "JEPA 109M",
            "objective": "jepa_good",
            "metric": "mutual_knn@10",
            "reference": "dinov2_vitb",
            "eval_set": "wit-1024",
            "samples": None,
            "value": 0.184,
            "note": "",
        }
    )
    assert store.write_baselines([row]) == 1
    assert store.write_baselines([row]) == 0
    assert len(store.baselines_frame()) == 1


def published_curve(samples=(1e6, 4e6, 1.6e7)) -> list[BaselineRow]:
    point = dict(source="paper", model="m", objective="ntp", metric="mutual_knn@10", note="")
    point |= dict(reference="dinov2_vitb", eval_set="wit-1024")
    return [BaselineRow(**point, samples=s, value=0.1 + i / 100) for i, s in enumerate(samples)]


def test_points_of_a_published_curve_that_differ_only_in_samples_are_each_kept(store_url):
    store = Store.open(store_url)
    assert store.write_baselines(published_curve()) == 3
    assert store.write_baselines(published_curve((1.6e7, 6.4e7))) == 1  # one point is new
    assert sorted(store.baselines_frame().samples) == [1e6, 4e6, 1.6e7, 6.4e7]


@pytest.mark.postgres
def test_a_schema_4_postgres_store_keeps_its_baselines_and_takes_a_whole_curve(store_url):
    if not store_url.startswith("postgresql"):
        pytest.skip("the schema 4 key is undone here with Postgres statements")
    Store.open(store_url).write_baselines(published_curve((1e6,)))
    postgres_store_at(store_url, 4).dispose()
    store = Store.open(store_url, upgrade=True)
    assert store.upgraded_from == 4 and len(store.baselines_frame()) == 1
    assert store.write_baselines(published_curve()) == 2


def schema_1_copy(tmp_path: Path) -> str:
    """One stored file per schema version: this one was written by schema 1."""
    copy = tmp_path / "schema1.db"
    copy.write_bytes((Path(__file__).parent / "stores" / "schema1.db").read_bytes())
    return f"sqlite:///{copy}"


def test_a_schema_1_store_is_refused_with_the_command_that_upgrades_it(tmp_path):
    url = schema_1_copy(tmp_path)
    with pytest.raises(StoreError, match=f"written by schema 1, this orch reads {SCHEMA_VERSION}: run 'orch"):
        Store.open(url)
    with pytest.raises(StoreError, match=r"--store sqlite:///\S+schema1.db db upgrade"):
        Store.open(url)


def test_a_schema_1_store_is_upgraded_in_place_keeping_its_rows(tmp_path):
    url = schema_1_copy(tmp_path)
    store = Store.open(url, upgrade=True)
    assert store.upgraded_from == 1
    frame = store.measurements_frame("first")
    assert len(frame) == 1 and frame.iloc[0]["objective"] == "jepa_good"
    assert store.get_trial("a" * 64).status == "done"
    assert Store.open(url).upgraded_from is None  # now at this schema: opens without upgrading


def sqlite_schema(path: Path) -> list[tuple[str, str]]:
    """Every table's and index's CREATE statement, as the file holds it."""
    with closing(sqlite3.connect(path)) as connection:
        return connection.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()


def test_an_upgrade_that_fails_part_way_leaves_the_store_as_it_was(tmp_path):
    url = schema_1_copy(tmp_path)
    path = Path(url.removeprefix("sqlite:///"))
    before = survey_sqlite(path, url), sqlite_schema(path)
    engine = engine_for(url)

    def fail_at_the_rebuild(_connection, _cursor, statement, *_args) -> None:
        if statement.startswith("DROP TABLE baselines_before_upgrade"):  # steps 1-3 and half of 4 ran
            raise OSError("the machine went down")

    event.listen(engine, "before_cursor_execute", fail_at_the_rebuild)
    with pytest.raises(OSError):
        ensure_schema(engine, url, upgrade=True, create=False)
    engine.dispose()
    assert (survey_sqlite(path, url), sqlite_schema(path)) == before  # version 1, no table or column changed
    assert Store.open(url, upgrade=True).upgraded_from == 1


UNDO = {  # the statement that takes a Postgres store back over one step of STEPS[version]
    1: lambda step: step.statement(step.old),
    2: lambda step: f"ALTER TABLE {step.table} DROP COLUMN {step.column}",
    3: lambda step: f"ALTER TABLE {step.table} ALTER COLUMN {step.column} TYPE INTEGER",
    5: lambda step: f"ALTER TABLE {step.table} DROP COLUMN {step.column}",
    6: lambda step: f"DROP TABLE {step.table}",
    7: lambda step: f"ALTER TABLE {step.table} DROP COLUMN {step.column}",
    8: lambda step: f"ALTER TABLE {step.table} DROP COLUMN {step.column}",
    9: lambda step: f"DROP TABLE {step.table}",
    4: lambda step: (  # schema 4's key had no samples
        f"ALTER TABLE {step.table} DROP CONSTRAINT baseline_point_once; ALTER TABLE {step.table} ADD "
        "CONSTRAINT baseline_once UNIQUE (source, model, objective, metric, reference, eval_set, note)"
    ),
}


def postgres_store_at(store_url: str, version: int):
    """A new Postgres store taken back to schema `version`, every later step undone; its engine."""
    Store.open(store_url).close()
    engine = create_engine(store_url)
    with engine.begin() as connection:
        for step_version in range(SCHEMA_VERSION - 1, version - 1, -1):
            for step in STEPS[step_version]:
                connection.execute(text(UNDO[step_version](step)))
        connection.execute(text(f"UPDATE orch_meta SET value = '{version}' WHERE key = 'schema'"))
    return engine


def catalog(engine, query: str) -> list:
    """The rows of a query on Postgres' information schema; the engine is disposed of after."""
    with engine.connect() as connection:
        rows = connection.execute(text(query)).fetchall()
    engine.dispose()
    return rows


@pytest.mark.postgres
def test_a_schema_1_postgres_store_gets_the_new_widths(store_url):
    if not store_url.startswith("postgresql"):
        pytest.skip("the widths only exist on Postgres")
    engine = postgres_store_at(store_url, 1)  # the old widths, no noise columns, 32-bit counts
    with pytest.raises(StoreError, match="db upgrade"):
        Store.open(store_url)
    store = Store.open(store_url, upgrade=True)
    store.record_sweep("s", "a", "h", "s.yaml", [trial_row("k1", model="m" * 128)])
    ((width,),) = catalog(
        engine,
        "SELECT character_maximum_length FROM information_schema.columns "
        "WHERE table_name = 'trials' AND column_name = 'model'",
    )
    assert (store.upgraded_from, width) == (1, WIDTHS["model"])


def test_a_postgres_host_that_never_answers_fails_in_one_line_after_its_connect_timeout(tmp_path):
    """A socket that accepts connections and says nothing: the store gives up after the URL's
    connect_timeout, it does not hang. The bound is that timeout plus a process's start-up on a
    loaded machine (a fixed 15 s failed at 17.5 s under load)."""
    connect_timeout, start_up = 3, 30
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    port = silent.getsockname()[1]
    started = time.monotonic()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "orchestrator",
            "--store",
            f"postgresql+psycopg://orch:s3cret@127.0.0.1:{port}/x?connect_timeout={connect_timeout}",
            "status",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    took = time.monotonic() - started
    silent.close()
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith(f"orch: error: store postgresql+psycopg://orch:***@127.0.0.1:{port}/x")
    assert took < connect_timeout + start_up, took


def test_sample_counts_up_to_ten_trillion_round_trip(store_url):
    store = Store.open(store_url)
    size = 10**13
    store.record_sweep("huge", "a", "h", "s.yaml", [trial_row("h" * 64, data_size=size, budget_samples=size)])
    store.write_measurements([measurement("h" * 64, size, step=size // 64)])
    trials, frame = store.trials_frame("huge"), store.measurements_frame("huge")
    assert int(trials.data_size.iloc[0]) == size and int(frame.samples_seen.iloc[0]) == size


@pytest.mark.postgres
def test_an_upgraded_postgres_store_holds_64_bit_counts(store_url):
    if not store_url.startswith("postgresql"):
        pytest.skip("SQLite integers are 64-bit already")
    engine = postgres_store_at(store_url, 3)  # 32-bit counts
    assert Store.open(store_url, upgrade=True).upgraded_from == 3
    types = catalog(
        engine,
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = "
        "'trials' AND column_name IN ('data_size', 'budget_samples', 'samples_seen')",
    )
    assert {kind for _, kind in types} == {"bigint"} and len(types) == 3
