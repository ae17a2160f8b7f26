"""The order of a pairs file's rows: rounds over a seeded order of its images. Round 0 holds
every image's first pair, round 1 every second pair of the images that have one, and so on; in
each round the images come in the order of a seeded hash of their id. A trial of size D reads
the file's first D rows, so its subsets are nested (a size's rows are every smaller size's and
more) and each covers as many images as the file allows: min(D, images) where D is within round
0. The order depends on the seed and the image ids alone, not on the pairing rule.

The pairs builder groups rows by image in `BUCKETS` files whose ranges of the hash are in order
(`bucket_of`), pairs each bucket alone, and hands its pairs here (`Rounds.add`): they wait on disk,
one file per round and bucket, until `Rounds.write` streams them out round by round, so memory
holds one bucket's pairs at a time however large the input."""

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["BUCKETS", "Rounds", "bucket_of", "image_keys", "images_seen", "recorded_order"]

BUCKETS = 256  # the top 8 bits of an image's key


def image_keys(ids: list[str], seed: int) -> np.ndarray:
    """Each image id's place in the seeded order: 64 bits of a keyed hash of the id."""
    salt = seed.to_bytes(8, "little", signed=False)
    return np.fromiter(
        (
            int.from_bytes(hashlib.blake2b(i.encode(), digest_size=8, key=salt).digest(), "little")
            for i in ids
        ),
        np.uint64,
        len(ids),
    )


def images_seen(order: dict[str, Any], size: int) -> int:
    """The distinct images a trial of `size` pairs sees in a file written in `order` (its
    sidecar's record): one a pair through round 0, which holds each image once, then all."""
    per_round = order["pairs_per_round"]
    return min(size, per_round[0]) if per_round else 0


def recorded_order(pairs: Path) -> dict[str, Any] | None:
    """The order the sidecar beside a pairs file records (None: no sidecar by `orch data`)."""
    import json

    try:
        sidecar = json.loads(pairs.with_suffix(".json").read_text())
        order = sidecar["order"] if str(sidecar.get("format", "")).startswith("orch-") else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return order if isinstance(order, dict) and isinstance(order.get("pairs_per_round"), list) else None


def bucket_of(keys: np.ndarray) -> np.ndarray:
    """The bucket of each key: buckets hold consecutive ranges of the order."""
    return (keys >> np.uint64(56)).astype(np.int64)


class Rounds:
    """Pairs held on disk by round and bucket until they are written in order."""

    def __init__(self, folder: Path, schema: Any) -> None:
        self.folder, self.schema = folder, schema
        self.files: dict[tuple[int, int], Path] = {}
        self.sizes: dict[int, int] = {}  # round -> its pairs

    def add(self, bucket: int, columns: dict[str, list[str]], rounds: list[int], keys: list[int]) -> None:
        """One bucket's pairs (`columns`), each with its round and its image's key."""
        import pyarrow as pa

        order = np.lexsort((np.asarray(keys, np.uint64), np.asarray(rounds, np.int64)))
        table = pa.table(columns, schema=self.schema).take(order)
        sorted_rounds = np.asarray(rounds, np.int64)[order]
        edges = np.searchsorted(sorted_rounds, np.arange(sorted_rounds.max(initial=-1) + 2))
        for round_ in np.flatnonzero(np.diff(edges)):
            path = self.folder / f"round{round_:04d}-bucket{bucket:03d}.arrow"
            with pa.ipc.new_stream(str(path), self.schema) as writer:
                writer.write_table(table.slice(edges[round_], edges[round_ + 1] - edges[round_]))
            self.files[(int(round_), bucket)] = path
            self.sizes[int(round_)] = self.sizes.get(int(round_), 0) + int(edges[round_ + 1] - edges[round_])

    def record(self, seed: int) -> dict[str, Any]:
        """What the sidecar says of the order: the first D pairs cover min(D, images) images
        while D is within round 0 (one pair an image), and every image past it."""
        images = self.sizes.get(0, 0)
        return {
            "seed": seed,
            "pairs_per_round": [self.sizes[r] for r in sorted(self.sizes)],
            "images_seen": f"a trial of D pairs sees min(D, {images}) distinct images",
        }

    def write(self, writer: Any) -> None:
        """Every pair into `writer` (a Parquet writer), round by round, each round's buckets in
        the order of their keys; each file removed once written."""
        import pyarrow as pa

        for place in sorted(self.files):
            path = self.files.pop(place)
            writer.write_table(pa.ipc.open_stream(str(path)).read_all())
            path.unlink()
