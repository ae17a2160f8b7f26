"""Fractional GPUs pack trials on one device: a local Ray offering one (fake) GPU runs four
`tiny` trials that each ask for a quarter of it at the same time. CPU only: Ray's GPU resource
is a count it schedules by; the trials find no CUDA device and train on the CPU."""

import os
from pathlib import Path

import pytest

from db import Store
from tests.drivers import start_driver, sweep_raw, write_sweep

pytestmark = pytest.mark.processes  # real processes: run by .ci/run after the README's command


def most_at_once(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = peak = 0
    for _, change in events:
        running += change
        peak = max(peak, running)
    return peak


def test_quarter_gpus_put_four_trials_on_one_device_at_once(tmp_path):
    raw = sweep_raw(name="packed", sizes=("8K",), seeds=(0, 1)) | {"resources": {"cpu": 0.5, "gpu": 0.25}}
    sweep = write_sweep(tmp_path, raw)
    env = {"ORCH_RAY_TEMP_DIR": f"/tmp/orch-ray-g{os.getpid()}"}
    driver = start_driver(tmp_path, sweep, "--num-cpus", "2", "--num-gpus", "1", env=env)
    _, stderr = driver.communicate(timeout=600)
    assert driver.returncode == 0, stderr
    trials = Store.open(f"sqlite:///{Path(tmp_path) / 'orch.db'}").trials_frame("packed")
    assert set(trials.status) == {"done"} and set(trials.device) == {"cpu"}
    assert most_at_once(list(zip(trials.started, trials.finished, strict=True))) == 4


def test_without_the_gpus_they_ask_for_the_trials_fail_on_the_driver_in_one_line(tmp_path):
    raw = sweep_raw(name="nogpu", sizes=("8K",), seeds=(0,)) | {"resources": {"gpu": 0.25}}
    sweep = write_sweep(tmp_path, raw)
    env = {"ORCH_RAY_TEMP_DIR": f"/tmp/orch-ray-g{os.getpid()}"}
    driver = start_driver(tmp_path, sweep, "--num-cpus", "2", "--num-gpus", "0", env=env)
    _, stderr = driver.communicate(timeout=300)
    assert driver.returncode == 2, stderr
    (line,) = stderr.strip().splitlines()
    assert "ask for cpu 1, gpu 0.25, but no node has that (the largest: cpu 2, gpu 0)" in line
