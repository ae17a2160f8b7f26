"""`orch import` at scale: a generated CSV of 10^6 measurement rows (10^4 runs of 20 checkpoints
and 5 scores, as a W&B export would give) imported into a fresh SQLite store by the real CLI,
in its own process; its wall time, rows per second and peak memory, and the progress lines it
said. Goal: at least 20,000 rows a second.

    python bench/imports.py                 # 10^6 rows
    python bench/imports.py --rows 100000
"""

import argparse
import csv
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from orchestrator.imports import COLUMNS

GOAL_ROWS_PER_S = 20_000
CHECKPOINTS, SCORES = 20, [("mutual_knn@10", "dinov2_vitb"), ("cka", "dinov2_vitb"), ("cknna@10", "dino")]
SCORES += [("mutual_knn@10", "clip"), ("cka", "clip")]


def write_rows(path: Path, rows: int, rng: np.random.Generator) -> None:
    """`rows` rows: runs of 3 objectives x 4 sizes x seeds, each with CHECKPOINTS checkpoints."""
    per_run = CHECKPOINTS * len(SCORES)
    with path.open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(COLUMNS)
        written = 0
        for run in range(-(-rows // per_run)):
            objective = ("jepa_good", "ntp", "jepa_bad")[run % 3]
            size = (1_000_000, 4_000_000, 16_000_000, 64_000_000)[(run // 3) % 4]
            seed = run // 12
            for checkpoint in range(1, CHECKPOINTS + 1):
                seen = size * checkpoint // CHECKPOINTS
                for metric, reference in SCORES:
                    if written == rows:
                        return
                    value = f"{rng.uniform(0, 0.2):.6f}"
                    out.writerow([objective, "base", size, seed, seen, metric, reference, "wit-1024", value])
                    written += 1


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "runs.csv"
        write_rows(path, args.rows, np.random.default_rng(0))
        print(f"{args.rows:,} rows, {path.stat().st_size / 2**20:.0f} MiB of CSV")
        command = [sys.executable, "-m", "orchestrator", "--store", f"sqlite:///{folder}/o.db"]
        started = time.perf_counter()
        done = subprocess.run(
            [*command, "import", str(path), "--sweep", "big"], capture_output=True, text=True, check=False
        )
        took = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**10
    for line in done.stderr.splitlines():
        print(f"  {line}")
    if done.returncode != 0:
        sys.exit(f"orch import failed (exit {done.returncode})")
    rate = args.rows / took
    print(
        f"orch import: {took:.1f} s, {rate:,.0f} rows/s (goal >= {GOAL_ROWS_PER_S:,}: "
        f"{'met' if rate >= GOAL_ROWS_PER_S else 'missed'}), peak RSS {peak:.0f} MiB"
    )


if __name__ == "__main__":
    main()
