"""Scheduling efficiency: a sweep's trials under `orch sweep` (Ray Tune, store callback, local Ray
start included) against the same trials in a plain process pool of the same concurrency, side
by side in one run. Goal: a ratio pool/orch of at least 0.95.

    python bench/scheduler.py                                  # the whole embedded sweep
    python bench/scheduler.py --sizes 2K 4K 8K --concurrency 2   # its grid at these data sizes
"""

import argparse
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

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
    args = parser.parse_args()
    raw = yaml.safe_load(SWEEP.read_text())
    if args.sizes:
        raw["grid"]["data_size"] = args.sizes
    spec = parse_spec(raw, str(SWEEP))
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        with ProcessPoolExecutor(args.concurrency) as pool:
            rows = sum(pool.map(_pool_trial, [t.to_json() for t in spec.trials], [folder] * len(spec.trials)))
        pool_s = time.perf_counter() - start
        start = time.perf_counter()
        options = SweepOptions(
            max_concurrent=args.concurrency, num_cpus=args.concurrency, storage=Path(folder)
        )
        outcome = run_sweep(spec, f"sqlite:///{folder}/bench.db", options)
        orch_s = time.perf_counter() - start
    print(
        f"{len(spec.trials)} trials, concurrency {args.concurrency}; pool rows {rows}, orch {outcome.counts}"
    )
    print(f"plain process pool: {pool_s:8.1f} s")
    print(f"orch sweep:         {orch_s:8.1f} s")
    print(f"ratio pool/orch: {pool_s / orch_s:.3f} (goal >= 0.95)")


if __name__ == "__main__":
    main()
