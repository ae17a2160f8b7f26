"""`orch sweep` with real Ray Tune trials on a real two-node cluster: end to end, retries from a
checkpoint, failures, SIGKILL of the driver and the rerun, SIGINT."""

import json
import os
import shutil
import signal
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import pytest
import torch
import yaml
from sqlalchemy.engine import make_url

from db import Store
from orchestrator.errors import InputError
from orchestrator.run.raylocal import SESSION
from orchestrator.run.scheduler import SweepOptions, run_sweep
from orchestrator.sweepfile import load_spec, parse_spec
from tests.cli import orch
from tests.datasets import file_dataset
from tests.drivers import expected_rows, start_driver, sweep_raw, wait_for, write_sweep
from tests.orchestrator import faults

# Sweeps on a real two-node Ray cluster, and real driver processes: run by .ci/run after the
# README's command.
pytestmark = [pytest.mark.processes, pytest.mark.usefixtures("ray_cluster")]
PLANTED = "postgresql+psycopg://orch:Planted-S3cret@db-host/orch?sslpassword=Planted-Key"


def test_sweep_end_to_end_on_two_nodes(store_url, tmp_path):
    raw = sweep_raw() | {"store": PLANTED}  # run with another store: the file's is never opened
    spec = parse_spec(raw, "s.yaml", text=yaml.safe_dump(raw))
    outcome = run_sweep(spec, store_url, SweepOptions(storage=tmp_path, max_concurrent=2))
    assert outcome.counts == {"done": 4} and outcome.exit_code == 0
    store = Store.open(store_url)
    trials = store.trials_frame("s")
    assert set(trials.status) == {"done"} and set(trials.attempts) == {1}
    assert trials.n_params.notna().all() and set(trials.device) == {"cpu"}
    assert trials.host.nunique() == 2  # the trials ran on both nodes
    frame = store.measurements_frame("s")
    assert len(frame) == sum(expected_rows(t) for t in spec.trials)
    assert not frame.duplicated(["trial_key", "samples_seen", "metric", "reference"]).any()
    again = run_sweep(spec, store_url, SweepOptions(storage=tmp_path))
    assert again.skipped == 4 and again.counts == {}
    assert len(store.measurements_frame("s")) == len(frame)
    stored = store.find_sweep("s").spec_text
    assert "Planted" not in stored and "orch:***@db-host/orch?sslpassword=***" in stored
    password = make_url(store_url).password
    if password:  # no file the sweep wrote holds the store's password
        assert not [p for p in tmp_path.rglob("*") if p.is_file() and password.encode() in p.read_bytes()]


def test_a_failed_attempt_is_retried_from_its_checkpoint(tmp_path):
    url = f"sqlite:///{tmp_path / 'orch.db'}"
    spec = parse_spec(sweep_raw(objectives=("jepa_good",), seeds=(0,)), "s.yaml")
    options = SweepOptions(storage=tmp_path, retries=2, runner=faults.fail_once_after_first_checkpoint)
    outcome = run_sweep(spec, url, options)
    assert outcome.counts == {"done": 1}
    trial = spec.trials[0]
    starts = [json.loads(line)["step"] for line in (tmp_path / "cache" / f"starts-{trial.key}.jsonl").open()]
    assert starts == [0, 1024 // 32]  # the retry resumed at the 1024-sample checkpoint, not step 0
    record = Store.open(url).get_trial(trial.key)
    assert (record.status, record.attempts) == ("done", 2)
    assert len(Store.open(url).measurements_frame("s")) == expected_rows(trial)


def test_a_trial_that_keeps_failing_is_recorded_and_the_sweep_goes_on(tmp_path):
    url = f"sqlite:///{tmp_path / 'orch.db'}"
    spec = parse_spec(sweep_raw(seeds=(0,)), "s.yaml")
    outcome = run_sweep(spec, url, SweepOptions(storage=tmp_path, retries=1, runner=faults.ntp_always_fails))
    assert outcome.counts == {"done": 1, "failed": 1} and outcome.exit_code == 1
    trials = Store.open(url).trials_frame("s").set_index("objective")
    assert trials.loc["ntp", "status"] == "failed"
    assert trials.loc["ntp", "reason"] == "ValueError: planted failure for ntp"
    assert trials.loc["ntp", "attempts"] == 2
    assert trials.loc["jepa_good", "status"] == "done"


def statuses(folder: Path) -> dict[str, str]:
    path = folder / "orch.db"
    if not path.exists():
        return {}
    try:
        frame = Store.open(f"sqlite:///{path}").trials_frame()
    except Exception:  # the driver may still be creating the store
        return {}
    return dict(zip(frame.key, frame.status, strict=True))


def orphans(temp_dir: Path) -> list[int]:
    """Processes holding files in a Ray session under temp_dir whose driver is dead."""
    found = []
    for process in psutil.process_iter(["pid"]):
        try:
            paths = [f.path for f in process.open_files()]
        except (psutil.Error, OSError):
            continue
        drivers = {int(m.group(1)) for p in paths if p.startswith(str(temp_dir)) and (m := SESSION.search(p))}
        if drivers and not any(psutil.pid_exists(pid) for pid in drivers):
            found.append(process.pid)
    return found


def test_sigkill_of_the_driver_then_rerun_records_every_row_once(tmp_path):
    raw = sweep_raw(name="killed", sizes=("4K",), seeds=(0, 1, 2))
    sweep = write_sweep(tmp_path, raw)
    temp_dir = Path(f"/tmp/orch-ray-k{os.getpid()}")
    env = {"ORCH_RAY_TEMP_DIR": str(temp_dir)}
    driver = start_driver(tmp_path, sweep, "--num-cpus", "2", env=env)
    wait_for(lambda: "done" in statuses(tmp_path).values() or driver.poll() is not None)
    assert driver.poll() is None, driver.stderr.read()
    driver.kill()  # SIGKILL: no cleanup of any kind
    driver.wait()
    before = {key: status for key, status in statuses(tmp_path).items() if status == "done"}
    assert 0 < len(before) < 6
    assert list((tmp_path / ".orch" / "ray").glob("*/pack-*"))  # six short trials: killed mid-pack
    rerun = start_driver(tmp_path, sweep, "--num-cpus", "2", env=env)
    _, stderr = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, stderr
    assert "Token authentication" not in stderr  # Ray's warning about orch's own local Ray, silenced
    store = Store.open(f"sqlite:///{tmp_path / 'orch.db'}")
    trials = store.trials_frame("killed").set_index("key")
    assert set(trials.status) == {"done"}
    assert all(trials.loc[key, "attempts"] == 1 for key in before)  # finished trials not rerun
    spec = load_spec(sweep)
    frame = store.measurements_frame("killed")
    assert len(frame) == sum(expected_rows(t) for t in spec.trials)
    assert not frame.duplicated(["trial_key", "samples_seen", "metric", "reference"]).any()
    assert orphans(temp_dir) == []  # the rerun ended what the dead driver's Ray left behind


def test_sigint_records_interrupted_trials_and_exits_130(tmp_path, ray_cluster):
    raw = sweep_raw(name="stopped", sizes=("8K",), seeds=(0,))
    sweep = write_sweep(tmp_path, raw)
    driver = start_driver(tmp_path, sweep, "--address", ray_cluster.address, env=ray_cluster.env)
    wait_for(lambda: "running" in statuses(tmp_path).values() or driver.poll() is not None)
    time.sleep(3)
    driver.send_signal(signal.SIGINT)
    _, stderr = driver.communicate(timeout=120)
    assert driver.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert set(statuses(tmp_path).values()) <= {"interrupted", "done"}
    assert "interrupted" in statuses(tmp_path).values()
    rerun = start_driver(tmp_path, sweep, "--address", ray_cluster.address, env=ray_cluster.env)
    _, stderr = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, stderr
    assert set(statuses(tmp_path).values()) == {"done"}


def test_sigterm_stops_a_background_sweep_that_ignores_sigint(tmp_path, ray_cluster):
    """`nohup orch sweep … &` starts with SIGINT ignored, by design; SIGTERM still stops it cleanly."""
    sweep = write_sweep(tmp_path, sweep_raw(name="nohup", sizes=("8K",), seeds=(0,)))
    driver = start_driver(
        tmp_path, sweep, "--address", ray_cluster.address, sigint=signal.SIG_IGN, env=ray_cluster.env
    )
    wait_for(lambda: "running" in statuses(tmp_path).values() or driver.poll() is not None)
    time.sleep(3)
    driver.send_signal(signal.SIGINT)  # ignored
    time.sleep(2)
    assert driver.poll() is None
    driver.send_signal(signal.SIGTERM)
    _, stderr = driver.communicate(timeout=120)
    assert driver.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted" in statuses(tmp_path).values()


def plant_code(folder, marker):
    torch.save(PlantedCode(str(marker)), folder / "model.pt")  # runs `touch` when unpickled


def truncate_model(folder, marker):
    raw = (folder / "model.pt").read_bytes()
    (folder / "model.pt").write_bytes(raw[: len(raw) // 2])


def garble_report(folder, marker):
    (folder / "report.json").write_text("{not json")


def misshape_history(folder, marker):
    (folder / "history.json").write_text(json.dumps({"rows": 5}))  # valid JSON, the wrong shape


UNUSABLE = {  # what is done to a finished trial's checkpoint, and what the line must name
    plant_code: "model.pt holds objects other than tensors; loading it could run code",
    truncate_model: "model.pt is truncated or corrupt",
    garble_report: "report.json is truncated or not JSON",
    misshape_history: "history.json is JSON of the wrong shape",
}


def test_an_unusable_checkpoint_is_set_aside_once_and_its_trial_starts_over(tmp_path):
    """Six finished trials, run again into a fresh store from the same folder: five checkpoints
    spoiled (each set aside and its trial started over, once), the sixth whole (its rows read back
    from the checkpoint, the first store's rows)."""
    spec = parse_spec(sweep_raw(objectives=("ntp", "jepa_good"), seeds=(0, 1, 2)), "s.yaml")
    first = run_sweep(spec, f"sqlite:///{tmp_path / 'first.db'}", SweepOptions(storage=tmp_path))
    assert first.counts == {"done": 6}
    trials = sorted(spec.trials, key=lambda t: t.key)
    marker, folders = tmp_path / "planted-code-ran", [tmp_path / "checkpoints" / t.key for t in trials]
    for spoil, folder in zip(UNUSABLE, folders, strict=False):
        spoil(folder, marker)
    shutil.rmtree(folders[4])  # another trial's checkpoint where this one's should be
    shutil.copytree(folders[5], folders[4])
    lines: list[str] = []
    url = f"sqlite:///{tmp_path / 'second.db'}"  # the same folder run into a fresh store
    outcome = run_sweep(spec, url, SweepOptions(storage=tmp_path, retries=0, progress=lines.append))
    assert outcome.counts == {"done": 6} and outcome.restarted == 5 and not marker.exists()
    text = "".join(lines)
    for folder, words in zip(
        folders, [*UNUSABLE.values(), f"belongs to trial {trials[5].key[:10]}"], strict=False
    ):
        assert f"checkpoint {folder}: {words}" in text
        assert (folder.parent / f"{folder.name}.unusable-1").is_dir()  # kept for a look
    assert "Traceback" not in text
    store = Store.open(url)
    assert {store.get_trial(t.key).attempts for t in trials} == {1}  # an unusable checkpoint is not retried
    frame = store.measurements_frame("s")
    assert len(frame) == sum(expected_rows(t) for t in spec.trials)  # every row, once
    assert not frame.duplicated(["trial_key", "samples_seen", "metric", "reference"]).any()
    # The trial whose checkpoint was left whole gives the second store the first store's rows.
    columns = ["samples_seen", "metric", "reference", "eval_set", "value"]
    kept = [
        f[f.trial_key == trials[5].key][columns].sort_values(columns[:4]).reset_index(drop=True)
        for f in (Store.open(f"sqlite:///{tmp_path / 'first.db'}").measurements_frame("s"), frame)
    ]
    pd.testing.assert_frame_equal(*kept)


class PlantedCode:
    """A pickle that runs a shell command when it is loaded."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def write_files_sweep(folder: Path) -> None:
    """One tiny JEPA trial over 64 caption pairs, scored against a random reference."""
    folder.mkdir()
    pairs = [(f"a red cube {i}", f"the cube {i} is red") for i in range(64)]
    data = file_dataset(folder, pairs, [f"eval text {i}" for i in range(32)], width=8)
    raw = sweep_raw("files", objectives=("jepa_good",), sizes=("64",), seeds=(0,))
    raw |= {"data": data, "eval": {"set": "toy-32", "metrics": ["mutual_knn@10"], "checkpoints": "log2"}}
    (folder / "files.yaml").write_text(yaml.safe_dump(raw))


def test_a_relative_sweep_path_reads_its_files_on_every_worker(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    write_files_sweep(folder)
    monkeypatch.chdir(folder)
    spec = load_spec("files.yaml")  # relative, as `cd data && orch sweep files.yaml` gives it
    assert Path(spec.trials[0].data.base_dir).is_absolute()
    outcome = run_sweep(spec, f"sqlite:///{tmp_path / 'o.db'}", SweepOptions(storage=tmp_path / "runs"))
    assert outcome.counts == {"done": 1}, outcome.summary()


def test_a_reference_changed_under_a_finished_trial_is_named_and_nothing_reruns(tmp_path):
    write_files_sweep(tmp_path / "data")
    url, said = f"sqlite:///{tmp_path / 'o.db'}", []
    options = SweepOptions(storage=tmp_path / "runs", progress=said.append)
    assert run_sweep(load_spec(tmp_path / "data" / "files.yaml"), url, options).counts == {"done": 1}
    rerun = run_sweep(load_spec(tmp_path / "data" / "files.yaml"), url, options)
    assert (rerun.counts, rerun.skipped) == ({}, 1) and not [line for line in said if "changed" in line]
    np.save(tmp_path / "data" / "dino.npy", np.ones((32, 8)))  # the same path, other bytes
    rerun = run_sweep(load_spec(tmp_path / "data" / "files.yaml"), url, options)
    assert (rerun.counts, rerun.skipped) == ({}, 1)  # rerun only when asked: under a new path
    changed = [line for line in said if "changed" in line]
    assert len(changed) == 1 and changed[0].startswith("orch: data.eval.features.dino: ")
    assert "dino.npy changed (sha256 " in changed[0] and "since 1 finished trial(s)" in changed[0]
    assert "name it under a new path" in changed[0]


def test_a_sweep_over_pairs_built_from_coco_captions_runs_end_to_end_with_orch_fit(tmp_path):
    """COCO-format captions (made here) -> `orch data pairs` -> a files sweep -> `orch fit`."""
    words = ["red", "blue", "green", "tall", "small", "round"]
    annotations = [
        {
            "image_id": image,
            "id": 5 * image + j,
            "caption": f"{words[image % 6]} {words[(image + j) % 6]} {image}",
        }
        for image in range(40)
        for j in range(5)
    ]
    (tmp_path / "coco.json").write_text(json.dumps({"images": [], "annotations": annotations}))
    built = orch("data", "pairs", "coco.json", "--out", "pairs.parquet", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    sidecar = json.loads((tmp_path / "pairs.json").read_text())
    assert sidecar["counts"]["pairs"] == 80 and sidecar["rule"] == "disjoint"
    data = file_dataset(tmp_path, [], [f"{w} {i}" for i, w in enumerate(words * 5)], width=8)
    raw = sweep_raw("built", objectives=("jepa_good",), sizes=("16", "32", "64"), seeds=(0,))
    raw["train"] = {**raw.get("train", {}), "batch_size": 8}  # a batch of distinct samples at 16
    raw |= {
        "data": data | {"pairs": "pairs.parquet", "max_len": 16},
        "eval": {"set": "toy-30", "metrics": ["mutual_knn@10"], "checkpoints": {"first": 8}},
    }
    spec = parse_spec(raw, str(tmp_path / "built.yaml"), text=yaml.safe_dump(raw), base_dir=tmp_path)
    url = f"sqlite:///{tmp_path / 'o.db'}"
    outcome = run_sweep(spec, url, SweepOptions(storage=tmp_path / "runs"))
    assert outcome.counts == {"done": 3}, outcome.summary()
    assert sidecar["order"]["images_seen"] == "a trial of D pairs sees min(D, 40) distinct images"
    status = json.loads(orch("--store", url, "status", "built", "--json").stdout)
    assert {t["data_size"]: t["images"] for t in status["sweeps"][0]["trials"]} == {16: 16, 32: 32, 64: 40}
    assert "data_size  images" in orch("--store", url, "status", "built").stdout
    fit = orch("--store", url, "fit", "--out", str(tmp_path / "report"), "--json")
    assert fit.returncode == 0, fit.stderr
    assert [f["objective"] for f in json.loads(fit.stdout)["fits"]] == ["jepa_good"]


@pytest.mark.parametrize(
    ("resources", "asked"),
    [
        ({"gpu": 1}, "cpu 1, gpu 1, but no node has that"),
        ({"cpu": 64}, "cpu 64, gpu 0, but no node has that"),
        # the session's cluster: two nodes of 1 CPU each
        ({"workers": 2}, r"2 workers of cpu 1, gpu 0 \(cpu 2.01, gpu 0 in all\), more than the cluster has"),
        (
            {"workers": 2, "cpu": 0.5, "placement": "strict_pack"},
            r"2 workers of cpu 0.5, gpu 0 \(cpu 1.01, gpu 0 in all\), more than one node has",
        ),
        (
            {"workers": 3, "cpu": 0.1, "placement": "strict_spread"},
            "3 workers .* on as many nodes .*, but the cluster has 2",
        ),
    ],
)
def test_a_trial_no_node_can_hold_fails_before_anything_runs(tmp_path, resources, asked):
    spec = parse_spec(sweep_raw("big") | {"resources": resources}, "big.yaml")
    url = f"sqlite:///{tmp_path / 'o.db'}"
    started = time.monotonic()
    with pytest.raises(InputError, match=rf"big.yaml: trials of model tiny ask for {asked}"):
        run_sweep(spec, url, SweepOptions(storage=tmp_path))
    assert time.monotonic() - started < 30
    assert Store.open(url).sweep_names() == []  # nothing recorded, no trial pending
