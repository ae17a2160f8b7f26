"""Shared fixtures: a fresh store per test, on SQLite and (where a URL is set) on Postgres."""

import os
import uuid
from collections.abc import Iterator

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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--goals",
        choices=("full", "smoke"),
        default="full",
        help="the slow goals in full, or as smoke checks: a few replicates, loose bounds (tests.goal_lock)",
    )
