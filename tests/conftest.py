"""Shared fixtures: a fresh store per test, on SQLite and (where a URL is set) on Postgres."""

import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

POSTGRES_URL = os.environ.get("ORCH_TEST_POSTGRES_URL")


def pytest_configure(config: pytest.Config) -> None:
    """Ray clusters in token mode, read once as Ray is first imported: the session's `ray start`
    cluster takes a token, and the local Ray a driver starts would be in token mode anyway (Ray's
    default, a token made when there is none). Under pytest-xdist each worker trains with one
    torch thread: two workers with two threads each on 2 cores made the training tests 2.4x
    slower."""
    os.environ.setdefault("RAY_AUTH_MODE", "token")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        import torch

        torch.set_num_threads(1)


def _fresh_postgres_database() -> Iterator[str]:
    """A new database on the test server, dropped afterwards, so tests never share rows."""
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    name = f"orch_t_{uuid.uuid4().hex[:12]}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'orch.db'}"
        return
    if not POSTGRES_URL:
        pytest.skip("ORCH_TEST_POSTGRES_URL is not set (.ci/run sets it)")
    yield from _fresh_postgres_database()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh database on the test server, for what only Postgres has (a password)."""
    if not POSTGRES_URL:
        pytest.skip("ORCH_TEST_POSTGRES_URL is not set (.ci/run sets it)")
    yield from _fresh_postgres_database()


@pytest.fixture(scope="session")
def ray_cluster(tmp_path_factory):
    """One `ray start` cluster for the whole session: a head and a worker node on this machine
    (1 CPU each, token-authenticated, each its own process tree), stopped by their PIDs at the
    end. In-process sweeps join it; a driver process joins it with --address and the token
    (`env=ray_cluster.env` names it). This process's environment is left as it was."""
    import logging

    import ray
    from ray import cloudpickle

    from tests.orchestrator import faults
    from tests.rayclusters import ray_start_cluster

    cloudpickle.register_pickle_by_value(faults)
    with ray_start_cluster(tmp_path_factory.mktemp("ray_home")) as cluster:
        saved = dict(os.environ)
        os.environ |= cluster.env  # the token, read as this process joins
        ray.init(address=cluster.address, logging_level=logging.WARNING, log_to_driver=False)
        os.environ.clear()
        os.environ |= saved
        yield cluster
        ray.shutdown()


@pytest.fixture(scope="session")
def finished_sweep(ray_cluster, tmp_path_factory):
    """One embedded sweep run to its end once per session on the session's cluster (jepa_good and
    ntp, 8K samples, 2 seeds, a constant learning rate: every checkpoint a point of a curve); its
    folder holds base.yaml and orch.db. Tests that only read it take a copy (`copy_of`)."""
    import yaml

    from orchestrator.run.scheduler import SweepOptions, run_sweep
    from orchestrator.sweepfile import load_spec
    from tests.drivers import FINISHED, write_sweep

    folder = tmp_path_factory.mktemp("finished")
    sweep = write_sweep(folder, yaml.safe_load(FINISHED))
    outcome = run_sweep(
        load_spec(sweep), f"sqlite:///{folder / 'orch.db'}", SweepOptions(storage=folder / ".orch")
    )
    assert outcome.counts == {"done": 4}, outcome.summary()
    return folder


DEFAULT_PHASE = "not slow and not processes"  # pyproject's addopts: the README's test command
SWEPT_BUILD = pytest.StashKey[threading.Thread]()


def pytest_sessionstart(session: pytest.Session) -> None:
    """The README's test command starts building the real sweep's store (`tests.swept`) as the
    session starts, in a thread of the controller, beside the workers' first tests; the tests that
    read it run last. A run of chosen tests builds it when one asks (`swept_folder`)."""
    config = session.config
    whole = config.args_source is pytest.Config.ArgsSource.TESTPATHS and not config.option.collectonly
    if whole and config.option.markexpr == DEFAULT_PHASE and not os.environ.get("PYTEST_XDIST_WORKER"):
        from tests.swept import build_swept

        base = config._tmp_path_factory.getbasetemp()  # the workers' base folders lie in it
        config.stash[SWEPT_BUILD] = threading.Thread(target=build_swept, args=(base,), daemon=True)
        config.stash[SWEPT_BUILD].start()


def pytest_sessionfinish(session: pytest.Session) -> None:
    if SWEPT_BUILD in session.config.stash:
        session.config.stash[SWEPT_BUILD].join()  # never leave the sweep running past the session


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that read the real sweep's store last (in order otherwise): its build has ended
    by then."""
    items.sort(key=lambda item: "swept_folder" in getattr(item, "fixturenames", ()))


@pytest.fixture(scope="session")
def swept_folder(tmp_path_factory) -> Path:
    """The real 2-trial world sweep's folder (`tests.swept`): its sweep file and finished store,
    built once for the whole test run (workers share the controller's base folder)."""
    from tests.swept import build_swept

    base = tmp_path_factory.getbasetemp()  # under xdist each worker's; their parent is the run's
    return build_swept(base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base)


@pytest.fixture
def swept(swept_folder, tmp_path) -> str:
    """A copy of the real sweep's store in the test's own folder: its URL."""
    from tests.swept import copy_swept

    return copy_swept(swept_folder, tmp_path)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--goals",
        choices=("full", "smoke"),
        default="full",
        help="the slow goals in full, or as smoke checks: a few replicates, loose bounds (tests.goal_lock)",
    )
