"""Two real drivers on one store and one sweep (SQLite and Postgres): no trial is trained twice,
no row is written twice; a dead driver's trials are taken over, a live one's are left alone."""

import time

import pytest

from db import Store
from orchestrator.run.plan import trial_rows
from orchestrator.run.scheduler import SweepOptions, run_sweep
from orchestrator.sweepfile import load_spec, parse_spec
from tests.drivers import expected_rows, start_driver, sweep_raw, write_sweep

pytestmark = pytest.mark.processes  # real processes: run by .ci/run after the README's command


def test_two_drivers_started_together_share_the_sweep_and_train_each_trial_once(
    tmp_path, store_url, ray_cluster
):
    sweep = write_sweep(tmp_path, sweep_raw(name="twice", sizes=("4K",), seeds=(0, 1)))
    drivers = [
        start_driver(tmp_path, sweep, "--address", ray_cluster.address, store=store_url, env=ray_cluster.env)
        for _ in range(2)
    ]
    outputs = [driver.communicate(timeout=600) for driver in drivers]
    assert [driver.returncode for driver in drivers] == [0, 0], [stderr for _, stderr in outputs]
    store = Store.open(store_url)
    trials = store.trials_frame("twice")
    assert set(trials.status) == {"done"} and set(trials.attempts) == {1}  # nobody trained one twice
    assert trials.lease_owner.isna().all()  # each driver let its leases go
    frame = store.measurements_frame("twice")
    assert len(frame) == sum(expected_rows(t) for t in load_spec(sweep).trials)
    assert not frame.duplicated(["trial_key", "samples_seen", "metric", "reference"]).any()


def test_a_live_lease_is_left_alone_and_a_stale_one_taken_over(tmp_path, ray_cluster):
    spec = parse_spec(sweep_raw(name="lease", objectives=("ntp",), seeds=(0,)), "s.yaml")
    (trial,) = spec.trials
    url = f"sqlite:///{tmp_path / 'orch.db'}"
    store = Store.open(url)
    store.record_sweep(spec.name, "", "", "s.yaml", trial_rows(spec))
    store.claim([trial.key], "another-host:4242:feed", stale_after_s=60)  # a driver elsewhere
    options = SweepOptions(storage=tmp_path, retries=0, lease_stale_s=2.0)
    outcome = run_sweep(spec, url, options)  # its heartbeat is fresh: the trial is left to it
    assert (outcome.leased, outcome.counts) == (1, {})
    assert "1 run by another driver (live lease)" in outcome.summary()
    assert store.get_trial(trial.key).attempts == 0
    time.sleep(2.5)  # the other driver went quiet (SIGKILL, a lost machine)
    outcome = run_sweep(spec, url, options)
    assert (outcome.leased, outcome.counts) == (0, {"done": 1})
    assert store.get_trial(trial.key).lease_owner is None
