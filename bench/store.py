"""The store at cluster scale: 10^4 trials and 10^6 measurements written in batches through the
real `Store`, then `orch status`, `orch fit` and `orch export` timed as the real CLI, each in its
own process (its peak memory is its own). Goals: status < 1 s, fit < 30 s, export < 30 s,
peak memory < 2 GB.

    python bench/store.py                                  # SQLite in a temp folder
    python bench/store.py --url postgresql+psycopg://...   # a fresh, empty Postgres database
    python bench/store.py --trials 1000                    # a smaller store
"""

import argparse
import hashlib
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from db import Measurement, Store, TrialRow, mask_url
from orchestrator.sweepfile import parse_spec

OBJECTIVES, MODELS = ("jepa_good", "ntp"), ("tiny", "small")
SIZES = [int(145_000 * 2 ** (i / 3)) for i in range(25)]  # 145K .. 37M, a third of an octave apart
CHECKPOINTS = 20  # per trial, log-spaced up to its data size
SCORES = [(metric, reference) for metric in ("mutual_knn@10", "cka") for reference in ("dino", "clip")]
BATCH = 10_000  # measurement rows per write
GRID = {"objective": "ntp", "model": "tiny", "data_size": 1000, "seed": 0}  # a recipe to vary


def fill(store: Store, trials: int, rng: np.random.Generator) -> tuple[int, float]:
    """Write `trials` done trials with 100 rows each; return (rows, seconds)."""
    seeds = max(1, trials // (len(OBJECTIVES) * len(MODELS) * len(SIZES)))
    cells = [(o, m, s, seed) for o in OBJECTIVES for m in MODELS for s in SIZES for seed in range(seeds)]
    recipe = parse_spec({"name": "big", "grid": {c: [v] for c, v in GRID.items()}}, "big.yaml").trials[0]
    rows = [
        TrialRow(
            hashlib.sha256(f"{o}-{m}-{s}-{seed}".encode()).hexdigest(),
            replace(recipe, objective=o, model=m, data_size=s, seed=seed).to_json(),
            *(o, m, s, seed, s, s == SIZES[-1]),
        )
        for o, m, s, seed in cells
    ]
    started = time.perf_counter()
    store.record_sweep("big", "name: big", "h", "big.yaml", rows)
    for row in rows:  # as the driver leaves them: started, then done
        store.set_status(row.key, "running")
        store.set_status(row.key, "done")
    pending: list[Measurement] = []
    written = 0
    for (objective, _, size, _), row in zip(cells, rows, strict=True):
        for samples in np.unique(np.geomspace(1_000, size, CHECKPOINTS).astype(int)):
            level = 0.2 - (0.05 if objective == "jepa_good" else 0.09) * (samples / 1e6) ** -0.3
            for metric, reference in SCORES:
                value = float(np.clip(level + rng.normal(0, 0.004), 0, 1))
                pending.append(_row(row.key, int(samples), metric, reference, "wit-1024", value))
            pending.append(_row(row.key, int(samples), "train_loss", "", "train", 3.0 / np.log(samples)))
        if len(pending) >= BATCH:
            written += store.write_measurements(pending)
            pending = []
    written += store.write_measurements(pending)
    return written, time.perf_counter() - started


def _row(key: str, samples: int, metric: str, reference: str, eval_set: str, value: float) -> Measurement:
    return Measurement(
        key, samples, metric, reference, eval_set, value, samples // 32, 1e9, 1.0, 0.003, None, None, None
    )


# The CLI in a process that prints its own peak resident memory (KiB) as its last stderr line.
WITH_PEAK = (
    "import resource, runpy, sys\n"
    "sys.argv = ['orch', *sys.argv[1:]]\n"
    "try:\n    runpy.run_module('orchestrator', run_name='__main__')\n"
    "finally:\n    print('peak-kib', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
)


def timed(url: str, folder: Path, *args: str) -> tuple[float, float, int]:
    """(seconds, peak MiB, exit code) of one `orch` command in its own process."""
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", WITH_PEAK, "--store", url, *args], capture_output=True, text=True, cwd=folder
    )
    seconds = time.perf_counter() - started
    lines = result.stderr.strip().splitlines()
    peak = next(int(line.split()[1]) for line in lines if line.startswith("peak-kib "))
    if result.returncode != 0:
        print("\n".join(lines[-5:]), file=sys.stderr)
    return seconds, peak / 1024, result.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=None, help="A fresh store; default: SQLite in a temp folder.")
    parser.add_argument("--trials", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.url or f"sqlite:///{Path(folder) / 'big.db'}"
        rows, seconds = fill(Store.open(url), args.trials, np.random.default_rng(0))
        print(
            f"store {mask_url(url)}: {args.trials:,} trials, {rows:,} measurements written in {seconds:.1f} s"
        )
        goals = {"status": 1.0, "fit": 30.0, "export": 30.0}
        commands = {
            "status": ("status", "big"),
            "fit": ("fit", "big", "--out", "reports", "--predict", "40M"),
            "export": ("export", "big", "--out", "exported"),
        }
        for name, command in commands.items():
            seconds, peak, code = timed(url, Path(folder), *command)
            verdict = "ok" if code == 0 and seconds < goals[name] and peak < 2048 else "NOT MET"
            share = seconds / goals[name]
            print(
                f"orch {name:<6} {seconds:7.2f} s (goal < {goals[name]:g} s: {share:.2f}x of it), "
                f"peak {peak:6.0f} MiB (goal < 2048), exit {code}: {verdict}"
            )


if __name__ == "__main__":
    main()
