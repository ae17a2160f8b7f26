"""`orch sweep FILE --until-decided` as a researcher runs it: real driver processes, real Ray
Tune trials and torch training, a real SQLite store. The loop stays within its budget, and a
SIGKILLed driver's rerun finishes the recorded round (no pick made twice, every row once) and
goes on."""

import contextlib
import json
import signal
from pathlib import Path

import psutil
import pytest

from db import Store
from orchestrator.cli.until_decided import with_rounds
from orchestrator.sweepfile import load_spec
from tests.drivers import expected_rows, start_driver, sweep_raw, wait_for, write_sweep

pytestmark = pytest.mark.processes

CLAIMS = {
    "claims": [
        {
            "id": "good_above_bad",
            "says": "good views align above bad views at every checkpoint both measured",
            "source": "test",
            "kind": "order",
            "above": "jepa_good",
            "below": "jepa_bad",
        }
    ]
}


def loop_sweep(folder: Path, name: str, size: str) -> Path:
    """One seed of each view at `size`: the order claim is open after the grid (nothing measures
    the seed noise), so the loop has rounds to run."""
    (folder / "claims.yaml").write_text(json.dumps(CLAIMS))
    raw = sweep_raw(name=name, objectives=("jepa_good", "jepa_bad"), sizes=(size,), seeds=(0,))
    raw |= {"train": {"schedule": "constant", "warmup": 0.0}, "claims": "claims.yaml"}
    raw["eval"]["checkpoints"] = {"per_octave": 2, "first": 128}  # points enough for a law
    return write_sweep(folder, raw)


def trial_flops(store: Store, sweep: str) -> dict[tuple[str, int, int], float]:
    """(objective, data size, seed) -> the FLOPs the trial's last checkpoint recorded."""
    frame = store.measurements_frame(sweep)
    last = frame.groupby(["objective", "data_size", "seed"]).flops.max()
    return {(o, int(d), int(s)): float(f) for (o, d, s), f in last.items()}


def picked(rounds) -> list[tuple[str, int, int]]:
    return [(e["objective"], e["data_size"], e["seed"]) for r in rounds for e in json.loads(r.runs)]


def test_the_loop_never_spends_past_its_budget_and_says_why_it_stopped(tmp_path, ray_cluster):
    sweep = loop_sweep(tmp_path, "budgeted", "2K")
    budget = 1.2e11  # about two 2K runs of the tiny model: one round's picks, then too little left
    driver = start_driver(
        tmp_path,
        sweep,
        "--until-decided",
        "--budget",
        f"{budget:g}",
        "--max-rounds",
        "3",
        "--batch",
        "2",
        "--address",
        ray_cluster.address,
        env=ray_cluster.env,
    )
    stdout, stderr = driver.communicate(timeout=900)
    assert driver.returncode == 0, stderr
    store = Store.open(f"sqlite:///{tmp_path / 'orch.db'}")
    rounds = store.rounds("budgeted")
    assert rounds and all(r.finished is not None and r.budget == budget for r in rounds)
    assert sum(r.flops for r in rounds) <= budget
    spent = trial_flops(store, "budgeted")
    assert sum(spent[run] for run in picked(rounds)) <= budget  # what the picks' trials recorded
    assert "stopped: " in stdout and "good_above_bad" in stdout
    assert "round 1 of at most 3" in stderr and "after the grid: good_above_bad" in stderr
    for r in rounds:  # each round holds the claim's interval before, expected and found after it
        assert {"good_above_bad"} == json.loads(r.before).keys() == json.loads(r.after).keys()


def test_a_killed_drivers_rerun_finishes_the_recorded_round_and_records_every_row_once(tmp_path):
    sweep = loop_sweep(tmp_path, "resumed", "4K")
    env = {"ORCH_RAY_TEMP_DIR": f"/tmp/orch-ray-u{tmp_path.name[-6:]}"}
    args = ("--until-decided", "--max-rounds", "2", "--batch", "2", "--num-cpus", "2")
    driver = start_driver(tmp_path, sweep, *args, env=env, stderr=tmp_path / "driver.log")
    store = Store.open(f"sqlite:///{tmp_path / 'orch.db'}")

    def round_running() -> bool:
        rounds = store.rounds("resumed") if (tmp_path / "orch.db").exists() else []
        if not rounds or driver.poll() is not None:
            return driver.poll() is not None
        frame = store.measurements_frame("resumed")
        entries = set(picked(rounds))
        seen = zip(frame.objective, frame.data_size, frame.seed, frame.samples_seen, strict=True)
        return any((o, int(d), int(s)) in entries and n > 0 for o, d, s, n in seen)

    wait_for(round_running, timeout=600)
    assert driver.poll() is None, (tmp_path / "driver.log").read_text()[-3000:]
    # As a machine dies: the trials frozen, the driver killed, then they (left running, they
    # would outlive the driver by seconds and might finish the round for it).
    trials = [
        p
        for p in psutil.Process(driver.pid).children(recursive=True)
        if "ImplicitFunc" in " ".join(p.cmdline())
    ]
    for process in trials:
        process.suspend()
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    for process in trials:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    (killed,) = store.rounds("resumed")
    assert killed.finished is None
    rerun = start_driver(tmp_path, sweep, *args, env=env)
    stdout, stderr = rerun.communicate(timeout=900)
    assert rerun.returncode == 0, stderr
    assert "round 1: running its recorded picks" in stderr
    rounds = store.rounds("resumed")
    assert rounds[0].runs == killed.runs  # the recorded picks ran, not new ones
    assert all(r.finished is not None for r in rounds)
    runs = picked(rounds)
    assert len(runs) == len(set(runs))  # no pick made twice
    spec = with_rounds(load_spec(sweep), rounds)
    frame = store.measurements_frame("resumed")
    assert not frame.duplicated(["trial_key", "samples_seen", "metric", "reference"]).any()
    trials = store.trials_frame("resumed")
    assert set(trials.status) == {"done"} and len(trials) == len(spec.trials) == 2 + len(runs)
    per_trial = frame.groupby("trial_key").size()
    assert {t.key: per_trial[t.key] for t in spec.trials} == {t.key: expected_rows(t) for t in spec.trials}
    assert "stopped: " in stdout
