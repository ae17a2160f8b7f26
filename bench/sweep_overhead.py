"""Per-trial overhead of `orch sweep` over a long run: 10^3 short trials through real Ray Tune
and the real store callback, each trial a stand-in runner that hands out a few checkpoints of
rows in milliseconds (no training), so what is timed is orch's and Tune's work per trial. It
prints the mean time per finished trial over the first and the last tenth of the run, side by
side: a sweep that slows down as the store and Tune's trial list grow shows a ratio above 1.

    python bench/sweep_overhead.py                  # 1000 trials, 2 at a time, SQLite
    python bench/sweep_overhead.py --trials 200 --store postgresql+psycopg://...
"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from db import CheckpointReport, Measurement, Store, TrialStatus
from orchestrator.run.scheduler import SweepOptions, run_sweep
from orchestrator.sweepfile import parse_spec
from orchestrator.training.checkpoint import SavedCheckpoint
from orchestrator.training.state import TrainState

CHECKPOINTS = (0, 256, 512, 1024)  # samples seen at each stand-in checkpoint
METRICS = ("mutual_knn@10", "cka", "cknna@10")


def stand_in(config, on_checkpoint, resume, device, cache_dir: Path, host: str) -> None:
    """A trial without training: at each checkpoint, one row per metric and the trial's state."""
    history: tuple[Measurement, ...] = ()
    for samples in CHECKPOINTS:
        rows = tuple(
            Measurement(
                config.key,
                samples,
                metric,
                "factor_mlp",
                "world-1024",
                0.1,
                samples // 64,
                0.0,
                0.0,
                None,
                None,
                None,
                None,
            )
            for metric in METRICS
        )
        status = TrialStatus.DONE if samples == CHECKPOINTS[-1] else TrialStatus.RUNNING
        report = CheckpointReport(config.key, samples, status, None, 1, host, device, rows)
        state = TrainState(samples_seen=samples, step=samples // 64)
        history = (*history, *rows)
        model, rng = {"w": torch.zeros(1)}, torch.get_rng_state()
        on_checkpoint(SavedCheckpoint(model, {}, rng, state, report, history))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--store", default=None, help="A store URL (default: SQLite in a temp folder).")
    args = parser.parse_args()
    raw = {
        "name": "overhead",
        "eval": {"metrics": list(METRICS), "checkpoints": "log2"},
        "grid": {
            "objective": ["jepa_good"],
            "model": ["tiny"],
            "data_size": ["1K"],
            "seed": list(range(args.trials)),
        },
    }
    spec = parse_spec(raw, "overhead.yaml")
    with tempfile.TemporaryDirectory() as folder:
        url = args.store or f"sqlite:///{folder}/bench.db"
        options = SweepOptions(
            max_concurrent=args.concurrency, num_cpus=args.concurrency, storage=Path(folder), runner=stand_in
        )
        start = time.perf_counter()
        outcome = run_sweep(spec, url, options)
        wall = time.perf_counter() - start
        finished = np.sort(Store.open(url).trials_frame("overhead").finished.to_numpy(dtype=float))
    tenth = max(2, len(finished) // 10)
    first, last = np.diff(finished[:tenth]).mean(), np.diff(finished[-tenth:]).mean()
    print(f"{len(spec.trials)} stand-in trials, {args.concurrency} at a time: {outcome.counts}, {wall:.1f} s")
    print(f"per trial, first tenth: {first * 1e3:7.1f} ms")
    print(f"per trial, last tenth:  {last * 1e3:7.1f} ms")
    print(f"ratio last/first: {last / first:.2f} (target <= 1.1: no slow-down as the sweep goes)")


if __name__ == "__main__":
    main()
