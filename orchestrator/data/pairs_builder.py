"""`orch data pairs`: the `pairs.parquet` a files source reads (`image_id, caption_a, caption_b`),
built from (image id, caption) rows, with a sidecar that records the rule, the inputs' sha256 and
the counts.

Which two captions of an image make a pair is a choice the preprint leaves open; `RULES` names
orch's, and the sidecar records the one used:
- `disjoint` (default): an image's captions, in input order, paired off (1st with 2nd, 3rd with
  4th, ...): every caption is in at most one pair, so an epoch shows each caption once (an odd
  one out is counted, not used);
- `all`: every unordered pair (an image with 5 captions gives 10);
- `one`: one pair per image, drawn with `seed`.

The rows are written in rounds over a seeded order of the images (`pair_order`): a trial of
size D reads the first D, so sizes are nested and cover as many images as the file allows.

Memory is bounded whatever the input's size: rows go by their image's place in that order into
`BUCKETS` files on disk (their folder is removed at the end), then each bucket is grouped alone,
so the largest thing in memory is one bucket (1/256 of the rows) or one input batch. An image
with one caption can make no pair: it is refused, naming its row, unless `skip_single` counts it
out instead."""

import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from orchestrator.data.built import Overlap, check_out, describe_inputs, publish, staging
from orchestrator.data.caption_rows import caption_batches, row_name
from orchestrator.data.matrices import DataError
from orchestrator.data.pair_order import BUCKETS, Rounds, bucket_of, image_keys

__all__ = ["BUCKETS", "FORMAT", "RULES", "build_pairs"]

FORMAT = "orch-pairs/1"
RULES = ("disjoint", "all", "one")


NOTE_EVERY = 1_000_000  # captions between progress lines
ALL_MOST = 100  # captions an image under --rule all (4,950 pairs); COCO's have 5 to 7
# the sidecar's counts: images paired, pairs, images with one caption (left out under
# skip_single), captions in no pair (disjoint's odd ones out, one's others)
COUNTS = ("images", "pairs", "single", "unused")


def build_pairs(
    inputs: list[Path],
    out: Path,
    rule: str = "disjoint",
    seed: int = 0,
    eval_texts: Path | None = None,
    skip_single: bool = False,
    notify: Callable[[str], None] = lambda text: None,
) -> dict[str, Any]:
    """Write `out` and its sidecar from every row of `inputs`; the sidecar returned."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    check_out(out, [*inputs, eval_texts])
    if rule not in RULES:
        raise DataError(f"--rule {rule}: not a pairing rule (one of {', '.join(RULES)})")
    overlap = Overlap(eval_texts) if eval_texts is not None else None
    with staging(out) as staged:
        with tempfile.TemporaryDirectory(prefix=f".{out.name}.", dir=out.parent) as parts:
            rows = _partition(inputs, Path(parts), seed, notify)
            if sum(rows) >= NOTE_EVERY:
                notify(f"{sum(rows):,} captions read; pairing them by image")
            schema = pa.schema(
                [("image_id", pa.string()), ("caption_a", pa.string()), ("caption_b", pa.string())]
            )
            counts = Counter(dict.fromkeys(COUNTS, 0))
            (Path(parts) / "rounds").mkdir()
            rounds = Rounds(Path(parts) / "rounds", schema)
            for bucket in sorted(Path(parts).glob("*.arrow")):
                columns, pair_rounds, keys = _pairs(bucket, inputs, rule, seed, skip_single, counts)
                if overlap is not None:  # what a trial trains on: the captions paired
                    overlap.see(columns["caption_a"] + columns["caption_b"])
                rounds.add(int(bucket.stem), columns, pair_rounds, keys)
            with pq.ParquetWriter(staged, schema) as writer:
                rounds.write(writer)
        if counts["pairs"] == 0:
            raise DataError(f"{', '.join(map(str, inputs))}: no image has two captions, so no pair")
        sidecar = {
            "format": FORMAT,
            "inputs": describe_inputs(inputs, rows),
            "rule": rule,
            "seed": seed if rule == "one" else None,
            "skip_single": skip_single,
            "order": rounds.record(seed),
            "counts": {"captions": sum(rows), **counts},
            "overlap": overlap.summary() if overlap else None,
        }
        publish(staged, out, sidecar)
    return sidecar


_PART_SCHEMA_FIELDS = (
    ("image_id", "string"),
    ("caption", "string"),
    ("source", "int32"),
    ("place", "int64"),
    ("key", "uint64"),  # the image's place in the seeded order (`image_keys`), hashed once
)


def _partition(inputs: list[Path], folder: Path, seed: int, notify: Callable[[str], None]) -> list[int]:
    """Every row into its image's bucket file, in input order; the rows each input holds."""
    import pyarrow as pa

    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in _PART_SCHEMA_FIELDS])
    writers: dict[int, Any] = {}
    rows = []
    try:
        for source, path in enumerate(inputs):
            count = 0
            for batch in caption_batches(path):
                keys = image_keys(batch.ids, seed)
                buckets = bucket_of(keys)
                order = np.argsort(buckets, kind="stable")
                table = pa.table(
                    {
                        "image_id": batch.ids,
                        "caption": batch.captions,
                        "source": np.full(len(batch.ids), source, np.int32),
                        "place": np.asarray(batch.places, np.int64),
                        "key": keys,
                    },
                    schema=schema,
                ).take(order)
                edges = np.searchsorted(buckets[order], np.arange(BUCKETS + 1))
                for bucket in np.flatnonzero(np.diff(edges)):
                    if bucket not in writers:
                        writers[bucket] = pa.ipc.new_stream(str(folder / f"{bucket:03d}.arrow"), schema)
                    writers[bucket].write_table(table.slice(edges[bucket], edges[bucket + 1] - edges[bucket]))
                count += len(batch.ids)
                if count % NOTE_EVERY < len(batch.ids):
                    notify(f"{path}: {count:,} captions read")
            rows.append(count)
    finally:
        for writer in writers.values():
            writer.close()
    return rows


def _pairs(
    bucket: Path, inputs: list[Path], rule: str, seed: int, skip_single: bool, counts: Counter
) -> tuple[dict[str, list[str]], list[int], list[int]]:
    """One bucket's pairs, as columns, its rows grouped by image in input order, and each pair's
    round (its place among its image's pairs: `pair_order`) and image key; added to `counts`."""
    import pyarrow as pa

    table = pa.ipc.open_stream(str(bucket)).read_all()
    ids, captions = table.column("image_id").to_pylist(), table.column("caption").to_pylist()
    sources, places = table.column("source").to_numpy(), table.column("place").to_numpy()
    image_key = table.column("key").to_numpy()
    order = sorted(range(len(ids)), key=ids.__getitem__)  # stable: input order within an image
    rng = np.random.default_rng([seed, int(bucket.stem)])
    out: dict[str, list[str]] = {"image_id": [], "caption_a": [], "caption_b": []}
    rounds: list[int] = []
    keys: list[int] = []
    for image_id, members in _runs(order, ids):
        texts = [captions[i] for i in members]
        if len(texts) == 1:
            if not skip_single:
                where = row_name(inputs[sources[members[0]]], int(places[members[0]]))
                raise DataError(
                    f"{where}: image {image_id!r} has 1 caption, and a pair needs 2: drop its row, or "
                    "pass --skip-single to leave such images out (counted in the sidecar)"
                )
            counts["single"] += 1
            continue
        if rule == "all" and len(texts) > ALL_MOST:
            where = row_name(inputs[sources[members[0]]], int(places[members[0]]))
            raise DataError(
                f"{where}: image {image_id!r} has {len(texts):,} captions: --rule all would pair them "
                f"{len(texts) * (len(texts) - 1) // 2:,} ways; use --rule disjoint or one (at most "
                f"{ALL_MOST} captions an image under all)"
            )
        chosen = _choose(texts, rule, rng)
        counts["images"] += 1
        counts["pairs"] += len(chosen)
        counts["unused"] += len(texts) - (len(texts) if rule == "all" else 2 * len(chosen))
        for round_, (a, b) in enumerate(chosen):
            out["image_id"].append(image_id)
            out["caption_a"].append(a)
            out["caption_b"].append(b)
            rounds.append(round_)
            keys.append(int(image_key[members[0]]))
    return out, rounds, keys


def _runs(order: list[int], ids: list[str]) -> Iterator[tuple[str, list[int]]]:
    """(image id, its rows) for each run of one id in `order`."""
    start = 0
    for end in range(1, len(order) + 1):
        if end == len(order) or ids[order[end]] != ids[order[start]]:
            yield ids[order[start]], order[start:end]
            start = end


def _choose(texts: list[str], rule: str, rng: np.random.Generator) -> list[tuple[str, str]]:
    if rule == "disjoint":
        return list(zip(texts[0::2], texts[1::2], strict=False))
    if rule == "all":
        return [(texts[i], texts[j]) for i in range(len(texts)) for j in range(i + 1, len(texts))]
    first, second = rng.choice(len(texts), size=2, replace=False)
    return [(texts[first], texts[second])]
