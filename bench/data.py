"""The files path at GPU rate: 2M synthetic caption pairs in 16 Parquet shards, read through a
trial's real stream (shards in their seeded order, shuffle buffer, batch tokenization) in
batches of 256 at 64 tokens. Each case runs in its own process pinned to one tokenizer thread,
so its rate is per core and its peak memory its own.

Prints tokenized pairs/s per core (goal >= 20K) for the byte and BPE tokenizers, peak memory
after 0.25M and 2M pairs (flat when it does not grow with the rows read), and whether a fresh
stream resumed at a checkpoint's sample count gives the same batch as the running one. Beside
BPE it times `tokenizers`' own batch encoder alone on the same texts, already in memory, in
batches of the same size, reading each text's ids as any use of them must: orch's ratio to it
is what the stream (reading, shuffling, laying out the rows) costs around the library (goal
>= 0.95). Then BPE through 2 prefetch processes (as a GPU trial with spare CPUs gets), each
pinned to one thread, and their speed-up over one (goal >= 1.8x on 2 cores).

    python bench/data.py            # 2M pairs
    python bench/data.py --quick    # 200K pairs
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BATCH, MAX_LEN, SHARDS = 256, 64, 16
WORDS = [f"w{i}" for i in range(2000)] + ["red", "ball", "a", "the", "on", "left", "two", "blue", "stars"]


def write_shards(folder: Path, pairs: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    per_shard = pairs // SHARDS
    for shard in range(SHARDS):
        words = rng.choice(WORDS, size=(per_shard, 2, 10))
        captions = [" ".join(row) for row in words.reshape(-1, 10)]
        table = pa.table({"caption_a": captions[0::2], "caption_b": captions[1::2]})
        pq.write_table(table, folder / f"pairs-{shard:02d}.parquet")


def run_case(folder: Path, tokenizer: str, pairs: int, resume: int, workers: int) -> dict:
    """Read `pairs` pairs through a trial's stream; the rate, peak memory and the resume check."""
    from orchestrator.data.sources import open_trial_data
    from orchestrator.sweepfile import parse_spec

    data = {"source": "files", "pairs": "pairs-*.parquet", "tokenizer": tokenizer, "max_len": MAX_LEN}
    data |= {"eval": {"texts": "eval.jsonl", "features": {"ref": "ref.npy"}}}
    grid = {"objective": ["jepa_good"], "model": ["tiny"], "data_size": [pairs], "seed": [0]}
    raw = {"name": "data", "data": data, "eval": {"set": "e-64", "metrics": ["cka"]}, "grid": grid}
    (trial,) = parse_spec(raw, "bench.yaml", base_dir=folder).trials
    open_trial_data(trial, folder / "cache")  # BPE trains here, before the clock starts
    stream = open_trial_data(trial, folder / "cache", prefetch_workers=workers)
    started = time.perf_counter()
    for position in range(0, pairs, BATCH):
        batch = stream.take(position, BATCH)
        if position + BATCH == resume:
            running = stream.take(resume, BATCH)
    seconds = time.perf_counter() - started
    fresh = open_trial_data(trial, folder / "cache").take(resume, BATCH)
    return {
        "rate": pairs / seconds,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "resumes_exactly": bool(np.array_equal(running, fresh)),
        "shape": list(batch.shape),
    }


def library_case(folder: Path, pairs: int) -> dict:
    """`tokenizers`' batch encoder alone: the BPE orch trained, on the shards' first `pairs`
    pairs read into memory before the clock starts, both captions of each batch encoded in one
    call (as orch encodes them) and their ids read."""
    import pyarrow.parquet as pq
    from tokenizers import Tokenizer

    (trained,) = (folder / "cache").glob("bpe-*.json")
    tokenizer = Tokenizer.from_file(str(trained))
    tables = [pq.read_table(shard) for shard in sorted(folder.glob("pairs-*.parquet"))]
    firsts = [text for table in tables for text in table.column("caption_a").to_pylist()][:pairs]
    seconds = [text for table in tables for text in table.column("caption_b").to_pylist()][:pairs]
    started = time.perf_counter()
    for position in range(0, len(firsts), BATCH):
        texts = firsts[position : position + BATCH] + seconds[position : position + BATCH]
        [encoding.ids for encoding in tokenizer.encode_batch_fast(texts)]  # one call, as orch's
    return {"rate": len(firsts) / (time.perf_counter() - started)}


def pinned(*arguments: str) -> dict:
    """This script run with `arguments` in a fresh process held to one thread: its JSON line."""
    env = {**os.environ, "RAYON_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}  # one core's worth each
    result = subprocess.run(
        [sys.executable, __file__, *arguments], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def in_process(folder: Path, tokenizer: str, pairs: int, resume: int, workers: int = 0) -> dict:
    return pinned("--case", str(folder), tokenizer, str(pairs), str(resume), str(workers))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--case", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--library", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.library:
        print(json.dumps(library_case(Path(args.library[0]), int(args.library[1]))))
        return
    if args.case:
        folder, tokenizer, pairs, resume, workers = args.case
        print(json.dumps(run_case(Path(folder), tokenizer, int(pairs), int(resume), int(workers))))
        return
    total = 200_000 if args.quick else 2_000_000
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        started = time.perf_counter()
        write_shards(folder, total)
        (folder / "eval.jsonl").write_text(
            "".join(json.dumps({"text": f"w{i} w{i + 1}"}) + "\n" for i in range(64))
        )
        np.save(folder / "ref.npy", np.random.default_rng(0).normal(size=(64, 8)))
        print(f"{total:,} pairs in {SHARDS} Parquet shards written in {time.perf_counter() - started:.1f} s")
        for tokenizer in ("bytes", "bpe"):
            small = in_process(folder, tokenizer, total // 8, BATCH * 40)
            full = in_process(folder, tokenizer, total, BATCH * 400)
            print(
                f"{tokenizer:>5}: {full['rate']:8,.0f} tokenized pairs/s per core (goal >= 20,000: "
                f"{full['rate'] / 20_000:.2f}x), batch {full['shape']}; "
                f"peak memory {small['peak_mib']:.0f} MiB "
                f"after {total // 8:,} pairs vs {full['peak_mib']:.0f} MiB after {total:,} "
                f"({full['peak_mib'] / small['peak_mib']:.2f}x); resumes exactly: "
                f"{small['resumes_exactly'] and full['resumes_exactly']}"
            )
        quarter, rounds = total // 4, 3  # interleaved: the machine's noise hits both alike
        stream_rates, library_rates = [], []
        for _ in range(rounds):
            stream_rates.append(in_process(folder, "bpe", quarter, BATCH * 40)["rate"])
            library_rates.append(pinned("--library", str(folder), str(quarter))["rate"])
        ratios = [ours / theirs for ours, theirs in zip(stream_rates, library_rates, strict=True)]
        print(
            f"  bpe against `tokenizers`' batch encoder alone on the same {quarter:,} pairs in memory "
            f"({float(np.median(library_rates)):,.0f} pairs/s per core): orch's stream at "
            f"{float(np.median(ratios)):.3f}x it, median of {rounds} interleaved rounds "
            f"{[round(r, 3) for r in ratios]} (goal >= 0.95)"
        )
        spread = in_process(folder, "bpe", total, BATCH * 400, workers=2)
        print(
            f"  bpe, 2 prefetch processes: {spread['rate']:8,.0f} tokenized pairs/s in all "
            f"({spread['rate'] / 2:,.0f} per process), {spread['rate'] / full['rate']:.2f}x one "
            f"(goal >= 1.8x on 2 cores); resumes exactly: {spread['resumes_exactly']}"
        )


if __name__ == "__main__":
    main()
