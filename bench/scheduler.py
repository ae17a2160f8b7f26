"""Scheduling efficiency: a sweep's trials under `orch sweep` (Ray Tune, store callback, local Ray
start included; short trials packed, and again with `--no-pack`) against the same trials in a
plain process pool of the same concurrency, in interleaved rounds in one run. Goal: a median
ratio pool/orch of at least 0.95. Then how well orch's order (longest first) fills the slots: the
sweep's wall time against the larger of its longest trial and the sum of its trials' times over
the slots (goal: at most 1.1x).

    python bench/scheduler.py --rounds 1                       # the whole embedded sweep
    python bench/scheduler.py --sizes 2K 4K 8K --concurrency 2   # its grid at these data sizes
    python bench/scheduler.py --orch-only                      # orch alone: the order's figures
"""

import argparse
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

from db import Store
from db.rates import finished_trainings
from orchestrator.run.packing import PACK_BELOW_S
from orchestrator.run.plan import makespan
from orchestrator.run.scheduler import SweepOptions, run_sweep
from orchestrator.sweepfile import Spec, TrialConfig, parse_spec

SWEEP = Path(__file__).resolve().parents[1] / "sweeps" / "goodview_vs_ntp.yaml"


def _pool_trial(config_json: str, cache: str) -> int:
    import torch

    from orchestrator.training.loop import run_trial

    torch.set_num_threads(1)
    rows: list = []
    run_trial(TrialConfig.from_json(config_json), lambda c: rows.extend(c.report.rows), cache_dir=Path(cache))
    return len(rows)


def pool_seconds(spec: Spec, concurrency: int) -> float:
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder, ProcessPoolExecutor(concurrency) as pool:
        configs = [t.to_json() for t in spec.trials]
        assert all(pool.map(_pool_trial, configs, [folder] * len(spec.trials)))  # every trial made rows
    return time.perf_counter() - start


def orch_seconds(spec: Spec, concurrency: int, pack_below_s: float) -> tuple[float, list[float]]:
    """The sweep's wall time (Ray's start included), and each trial's own time."""
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        options = SweepOptions(
            max_concurrent=concurrency, num_cpus=concurrency, storage=Path(folder), pack_below_s=pack_below_s
        )
        outcome = run_sweep(spec, f"sqlite:///{folder}/bench.db", options)
        seconds = time.perf_counter() - start
        assert outcome.counts == {"done": len(spec.trials)}, outcome.counts
        objectives = {trial.objective for trial in spec.trials}
        finished = finished_trainings(Store.open(f"sqlite:///{folder}/bench.db"), objectives)
        return seconds, [wall_s for _, _, wall_s in finished]  # each trial's whole run, evaluation included


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", default=None, help="Run the grid at these data sizes.")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="Interleaved rounds; the median is the figure.")
    parser.add_argument("--orch-only", action="store_true", help="Skip the process pool and --no-pack.")
    args = parser.parse_args()
    raw = yaml.safe_load(SWEEP.read_text())
    if args.sizes:
        raw["grid"]["data_size"] = args.sizes
    spec = parse_spec(raw, str(SWEEP), base_dir=SWEEP.parent)
    print(f"{len(spec.trials)} trials, concurrency {args.concurrency}, {args.rounds} interleaved rounds")
    pools, packed, unpacked = [], [], []
    for round_ in range(args.rounds):
        if not args.orch_only:
            pools.append(pool_seconds(spec, args.concurrency))
            unpacked.append(orch_seconds(spec, args.concurrency, pack_below_s=0.0)[0])
        sweep_s, trial_s = orch_seconds(spec, args.concurrency, PACK_BELOW_S)
        packed.append(sweep_s)
        times = "" if args.orch_only else f"pool {pools[-1]:.1f} s, orch --no-pack {unpacked[-1]:.1f} s, "
        print(f"round {round_ + 1}: {times}orch {sweep_s:.1f} s")
    if not args.orch_only:
        ratios = [pool / orch for pool, orch in zip(pools, packed, strict=True)]
        alone = [pool / orch for pool, orch in zip(pools, unpacked, strict=True)]
        median = statistics.median(ratios)
        print(f"ratio pool/orch (packed): median {median:.3f} of {_listed(ratios)} (goal >= 0.95)")
        print(f"ratio pool/orch --no-pack: median {statistics.median(alone):.3f} of {_listed(alone)}")
    longest, spread = max(trial_s), sum(trial_s) / args.concurrency
    ideal = makespan([(seconds, 1) for seconds in trial_s], args.concurrency)
    print(
        f"orch's order (the last round): sweep {sweep_s:.1f} s (Ray's start included), longest trial "
        f"{longest:.1f} s, sum of trials over {args.concurrency} slots {spread:.1f} s: "
        f"{sweep_s / max(longest, spread):.3f}x the larger (goal <= 1.1); these trial times packed "
        f"longest first, with no overhead, end at {ideal:.1f} s ({sweep_s / ideal:.3f}x)"
    )


def _listed(values: list[float]) -> str:
    return ", ".join(f"{value:.3f}" for value in values)


if __name__ == "__main__":
    main()
