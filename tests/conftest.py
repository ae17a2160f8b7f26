"""Shared fixtures: a fresh store per test, on SQLite and (where a URL is set) on Postgres."""

import os
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

POSTGRES_URL = os.environ.get("ORCH_TEST_POSTGRES_URL")


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist each worker trains with one torch thread: two workers with two threads
    each on 2 cores made the training tests 2.4x slower."""
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
def ray_cluster():
    """One Ray for the whole session: a real two-node cluster on this machine (1 CPU each).

    In-process sweeps reuse it; subprocess drivers join it with --address.
    """
    import logging

    import ray
    from ray import cloudpickle
    from ray.cluster_utils import Cluster

    from tests.orchestrator import faults

    cloudpickle.register_pickle_by_value(faults)
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False},
    )
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, logging_level=logging.WARNING, log_to_driver=False)
    yield cluster
    ray.shutdown()
    cluster.shutdown()
