"""`orch data pairs` at scale: synthetic (image id, caption) rows, five captions an image, in one
Parquet file whose images are interleaved (as COCO's annotations are, so no image's captions are
adjacent), built into caption pairs by the real command in a process of its own. Prints rows/s
and the peak memory of the build at two sizes: bounded when the larger's peak is no more than the
smaller's plus the buffers that do not grow with the rows (goal: at most 1.5x at 10x the rows).

    python bench/data_pairs.py            # 10^6 and 10^7 rows
    python bench/data_pairs.py --quick    # 10^5 and 10^6 rows
"""

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CAPTIONS_PER_IMAGE = 5
WRITE_ROWS = 1_000_000
BUILD = """
import sys, time
from pathlib import Path
from orchestrator.data.pairs_builder import build_pairs
started = time.perf_counter()
sidecar = build_pairs([Path(sys.argv[1])], Path(sys.argv[2]))
took = time.perf_counter() - started
# VmHWM: this process's own peak (ru_maxrss can carry the parent's across fork and exec)
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) * 1024
print(took, peak, sidecar["counts"]["pairs"])
"""


def write_rows(path: Path, rows: int) -> None:
    """`rows` rows, image i's j-th caption at row j * images + i: an image's captions are far apart."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    images = rows // CAPTIONS_PER_IMAGE
    words = np.array(["a", "red", "ball", "on", "the", "left", "two", "blue", "stars", "above"])
    rng = np.random.default_rng(0)
    schema = pa.schema([("image_id", pa.int64()), ("caption", pa.string())])
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, rows, WRITE_ROWS):
            index = np.arange(start, min(start + WRITE_ROWS, rows))
            picks = words[rng.integers(len(words), size=(len(index), 8))]
            captions = [" ".join(row) for row in picks]
            writer.write_table(pa.table({"image_id": index % images, "caption": captions}, schema=schema))


def build(folder: Path, rows: int) -> dict:
    source = folder / f"rows-{rows}.parquet"
    write_rows(source, rows)
    out = subprocess.run(
        [sys.executable, "-c", BUILD, str(source), str(folder / f"pairs-{rows}.parquet")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    took, peak, pairs = float(out[0]), int(out[1]), int(out[2])
    assert pairs == rows // CAPTIONS_PER_IMAGE * 2  # disjoint: two pairs of five captions an image
    source.unlink()
    return {
        "rows": rows,
        "seconds": round(took, 1),
        "rows_per_s": round(rows / took),
        "peak_mib": peak / 2**20,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    small, large = (10**5, 10**6) if parser.parse_args().quick else (10**6, 10**7)
    with tempfile.TemporaryDirectory() as folder:
        cases = [build(Path(folder), rows) for rows in (small, large)]
    for case in cases:
        print(json.dumps(case | {"peak_mib": round(case["peak_mib"])}))
    ratio = cases[1]["peak_mib"] / cases[0]["peak_mib"]
    print(f"peak memory at {large:,} rows / at {small:,} rows: {ratio:.2f}x (goal <= 1.5x: bounded)")
    print(
        f"this process (writing the rows): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB"
    )


if __name__ == "__main__":
    main()
