"""Short trials packed into one Tune trial keep every guarantee of their own, with real Ray Tune
trials: a failure retries that trial alone, from its checkpoint, and the pack goes on. (A driver
SIGKILLed mid-pack and rerun: `test_scheduler.py`'s SIGKILL test, whose trials run in packs.)"""

import json
from pathlib import Path

import pytest

from db import Store
from orchestrator.run.scheduler import SweepOptions, run_sweep
from orchestrator.sweepfile import parse_spec
from tests.drivers import expected_rows, sweep_raw
from tests.orchestrator import faults

pytestmark = [pytest.mark.processes, pytest.mark.usefixtures("ray_cluster")]


def tune_trials(storage: Path) -> list[str]:
    """The folders of the Tune trials the sweep ran: a pack's name starts with `pack-`."""
    return sorted(folder.name for folder in (storage / "ray").glob("*/*") if folder.is_dir())


def rows_once(store: Store, sweep: str) -> int:
    frame = store.measurements_frame(sweep)
    assert not frame.duplicated(["trial_key", "samples_seen", "metric", "reference"]).any()
    return len(frame)


def test_a_trial_that_keeps_failing_inside_a_pack_fails_alone_and_the_pack_goes_on(tmp_path):
    url = f"sqlite:///{tmp_path / 'orch.db'}"
    spec = parse_spec(sweep_raw(seeds=(0, 1)), "s.yaml")  # 4 short trials; one slot: one pack
    options = SweepOptions(storage=tmp_path, retries=1, max_concurrent=1, runner=faults.ntp_always_fails)
    outcome = run_sweep(spec, url, options)
    assert [name[:5] for name in tune_trials(tmp_path)] == ["pack-"]
    assert outcome.counts == {"done": 2, "failed": 2} and outcome.exit_code == 1
    store = Store.open(url)
    trials = store.trials_frame("s")
    ntp, jepa = trials[trials.objective == "ntp"], trials[trials.objective == "jepa_good"]
    assert set(ntp.status) == {"failed"} and set(ntp.attempts) == {2}  # its own retry, then failed
    assert set(ntp.reason) == {"ValueError: planted failure for ntp"}
    # the pack runs NTP's (longer) trials first: the JEPA trials after them still ran, once each
    assert set(jepa.status) == {"done"} and set(jepa.attempts) == {1}
    assert rows_once(store, "s") == sum(expected_rows(t) for t in spec.trials if t.objective != "ntp")


def test_a_failed_attempt_inside_a_pack_resumes_from_its_checkpoint(tmp_path):
    url = f"sqlite:///{tmp_path / 'orch.db'}"
    spec = parse_spec(sweep_raw(seeds=(0,)), "s.yaml")
    options = SweepOptions(
        storage=tmp_path, retries=2, max_concurrent=1, runner=faults.fail_once_after_first_checkpoint
    )
    outcome = run_sweep(spec, url, options)
    assert [name[:5] for name in tune_trials(tmp_path)] == ["pack-"]
    assert outcome.counts == {"done": 2}
    store = Store.open(url)
    for trial in spec.trials:
        log = tmp_path / "cache" / f"starts-{trial.key}.jsonl"
        assert [json.loads(line)["step"] for line in log.open()] == [0, 1024 // 32]  # resumed, once
        record = store.get_trial(trial.key)
        assert (record.status, record.attempts) == ("done", 2)
        assert record.reason is None or "planted" not in record.reason
    assert rows_once(store, "s") == sum(expected_rows(t) for t in spec.trials)
