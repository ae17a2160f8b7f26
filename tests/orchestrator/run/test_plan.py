"""The dry run's makespan (trials of several GPUs each, started longest first as GPUs free up),
and the order a sweep starts its trials in: longest first."""

import pytest

from orchestrator.run.packing import sweep_packs
from orchestrator.run.plan import Throughput, makespan
from orchestrator.sweepfile import parse_spec


def test_one_gpu_trials_are_packed_longest_first():
    assert makespan([(3, 1), (3, 1), (2, 1), (2, 1), (2, 1)], gpus=2) == 7  # 3+2+2 | 3+2
    assert makespan([(5, 1), (1, 1), (1, 1)], gpus=8) == 5  # the longest trial bounds it
    assert makespan([], gpus=4) == 0


def test_a_multi_gpu_trial_waits_for_enough_free_gpus():
    # 8 GPUs: the 4-GPU trial (10 h) and four 1-GPU trials (6 h) start at once; the 8-GPU trial
    # (2 h) needs every GPU free, at 10 h
    assert makespan([(10, 4), (6, 1), (6, 1), (6, 1), (6, 1), (2, 8)], gpus=8) == 12


def test_a_trial_larger_than_the_cluster_never_starts():
    assert makespan([(1, 16)], gpus=8) == float("inf")


def test_gpu_hours_from_flops():
    # 940M JEPA samples at ~65 GFLOP each, 40% of an H200's 989 TFLOP/s: about two days
    assert Throughput().gpu_hours(940e6 * 65e9) == pytest.approx(42.9, abs=0.1)
    assert Throughput(peak_tflops=312, mfu=0.5).gpu_hours(312e12 * 0.5 * 3600) == pytest.approx(1.0)


def longest_first(spec, rates):
    """The order a sweep starts the spec's trials in, none of them packed."""
    packs = sweep_packs(spec, list(spec.trials), rates, {"CPU": 1.0}, None, below_s=0)
    return [pack.ask.config for pack in packs]


def ordered(spec, rates):
    return [(t.objective, t.data_size) for t in longest_first(spec, rates)]


def test_trials_start_longest_first():
    grid = {"objective": ["jepa_good", "ntp"], "model": ["tiny"], "data_size": ["2K", "8K"], "seed": [0]}
    spec = parse_spec({"name": "s", "grid": grid}, "s.yaml")
    # no rate measured yet: the FLOPs decide (NTP's tiny trial has more than JEPA's at one size)
    assert ordered(spec, {}) == [("ntp", 8000), ("jepa_good", 8000), ("ntp", 2000), ("jepa_good", 2000)]
    # JEPA measured 10x slower per FLOP: its 2K trial now outlasts NTP's 8K one
    slow_jepa = {"jepa_good": 1e8, "ntp": 1e9}
    expected = [("jepa_good", 8000), ("jepa_good", 2000), ("ntp", 8000), ("ntp", 2000)]
    assert ordered(spec, slow_jepa) == expected
    # an objective with no rate gets the median of the others
    assert ordered(spec, {"jepa_good": 1e9}) == ordered(spec, {})


def test_a_trial_on_more_workers_is_shorter():
    grid = {"objective": ["jepa_good"], "model": ["tiny", "small"], "data_size": ["8K"], "seed": [0]}
    alone = parse_spec({"name": "s", "grid": grid}, "s.yaml")
    assert [t.model for t in longest_first(alone, {})] == ["small", "tiny"]
    split = {"name": "s", "grid": grid, "resources": {"model": {"small": {"workers": 8}}}}
    spec = parse_spec(split, "s.yaml")
    assert [t.model for t in longest_first(spec, {})] == ["tiny", "small"]
