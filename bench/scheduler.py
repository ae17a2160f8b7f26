"""Scheduling efficiency: a sweep's trials under `orch sweep` (Ray Tune, store callback, local Ray
start included) against the same trials in a plain process pool of the same concurrency, side
by side in one run. Goal: a ratio pool/orch of at least 0.95. Then how well orch's order (longest
first) packs the slots: the sweep's wall time against the larger of its longest trial and the sum
of its trials' times over the slots (goal: at most 1.1x).

    python bench/scheduler.py                                  # the whole embedded sweep
    python bench/scheduler.py --sizes 2K 4K 8K --concurrency 2   # its grid at these data sizes
    python bench/scheduler.py --orch-only                      # orch alone: the packing figures
"""

import argparse
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

from db import Store
from db.rates import finished_trainings
from orchestrator.run.plan import makespan
from orchestrator.run.scheduler import SweepOptions, run_sweep
from orchestrator.spec import TrialConfig, parse_spec

SWEEP = Path(__file__).resolve().parents[1] / "sweeps" / "goodview_vs_ntp.yaml"


def _pool_trial(config_json: str, cache: str) -> int:
    import torch

    from orchestrator.training.loop import run_trial

    torch.set_num_threads(1)
    rows: list = []
    run_trial(TrialConfig.from_json(config_json), lambda c: rows.extend(c.report.rows), cache_dir=Path(cache))
    return len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", default=None, help="Run the grid at these data sizes.")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--orch-only", action="store_true", help="Skip the process pool.")
    args = parser.parse_args()
    raw = yaml.safe_load(SWEEP.read_text())
    if args.sizes:
        raw["grid"]["data_size"] = args.sizes
    spec = parse_spec(raw, str(SWEEP), base_dir=SWEEP.parent)
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        if not args.orch_only:
            with ProcessPoolExecutor(args.concurrency) as pool:
                configs = [t.to_json() for t in spec.trials]
                rows = sum(pool.map(_pool_trial, configs, [folder] * len(spec.trials)))
        pool_s = time.perf_counter() - start
        start = time.perf_counter()
        options = SweepOptions(
            max_concurrent=args.concurrency, num_cpus=args.concurrency, storage=Path(folder)
        )
        outcome = run_sweep(spec, f"sqlite:///{folder}/bench.db", options)
        orch_s = time.perf_counter() - start
        objectives = {trial.objective for trial in spec.trials}
        finished = finished_trainings(Store.open(f"sqlite:///{folder}/bench.db"), objectives)
        trial_s = [wall_s for _, _, wall_s in finished]  # each trial's whole run, evaluation included
    print(f"{len(spec.trials)} trials, concurrency {args.concurrency}; orch {outcome.counts}")
    if not args.orch_only:
        print(f"plain process pool: {pool_s:8.1f} s ({rows} rows)")
        print(f"orch sweep:         {orch_s:8.1f} s")
        print(f"ratio pool/orch: {pool_s / orch_s:.3f} (goal >= 0.95)")
    longest, spread = max(trial_s), sum(trial_s) / args.concurrency
    packed = makespan([(seconds, 1) for seconds in trial_s], args.concurrency)
    print(
        f"orch's packing: sweep {orch_s:.1f} s (Ray's start included), longest trial {longest:.1f} s, "
        f"sum of trials over {args.concurrency} slots {spread:.1f} s: "
        f"{orch_s / max(longest, spread):.3f}x the larger (goal <= 1.1); these trial times packed "
        f"longest first, with no overhead, end at {packed:.1f} s ({orch_s / packed:.3f}x)"
    )


if __name__ == "__main__":
    main()
