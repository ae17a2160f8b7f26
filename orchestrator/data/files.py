"""Real data from the files a cluster user has, streamed so that 940M rows never sit in memory.

- pairs: shards (`data.shards`: JSONL, .jsonl.gz, .jsonl.zst or Parquet) with `image_id,
  caption_a, caption_b`, or `image_id, caption` with several consecutive rows per image
  (consecutive captions of one image become a pair);
- documents: shards with `chunk_a, chunk_b` (`orch data chunks`), or `text`, whose two halves are
  its two chunks (bad views);
- eval: JSONL with `text` per row, plus one `.npy` feature matrix per reference, rows aligned.

Every problem is a `DataError` naming the file (and line or column where there is one).
"""

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from orchestrator.data.chunks_builder import chunk_pairs
from orchestrator.data.matrices import DataError, check_matrix, load_arrays
from orchestrator.data.shards import parquet_batches, parquet_rows, read_rows, resolve_shards, rows_of
from orchestrator.sweepfile import DataConfig

__all__ = [
    "CHECKED_ROWS",
    "DataError",
    "Reference",
    "check_files",
    "corpus_of",
    "document_shards",
    "iter_documents",
    "iter_pairs",
    "pair_shards",
    "read_eval",
]

CHECKED_ROWS = 10_000  # rows of each training file the driver reads before any trial starts
PAIR_COLUMNS = ("caption_a", "caption_b")


def _text(row: dict, column: str, where: str) -> str:
    value = row.get(column)
    if not isinstance(value, str):
        raise DataError(f"{where}: column '{column}' is missing or not text")
    if not value.strip():
        raise DataError(f"{where}: column '{column}' is empty (drop the row or give it text)")
    return value


def pair_shards(data: DataConfig) -> list[Path]:
    return resolve_shards(data.pairs, Path(data.base_dir), "data.pairs")


def document_shards(data: DataConfig) -> list[Path]:
    return resolve_shards(data.documents, Path(data.base_dir), "data.documents")


def corpus_of(data: DataConfig) -> int | None:
    """The caption pairs one epoch of the training text holds: `data.corpus` where the file states
    it, else the Parquet shards' row counts where every shard is Parquet with caption_a and
    caption_b (their footers: no row is read); None where neither says (JSONL is not counted:
    a pass over 10^9 rows is no dry-run step)."""
    if data.corpus is not None:
        return data.corpus
    try:
        shards = pair_shards(data)
    except DataError:
        return None
    counts = [
        parquet_rows(path, list(PAIR_COLUMNS)) if path.suffix == ".parquet" else None for path in shards
    ]
    return None if not counts or None in counts else sum(counts)


def iter_pairs(shards: list[Path]) -> Iterator[tuple[str, str]]:
    """Two captions of one image per example."""
    pending: tuple[object, str] | None = None
    for path in shards:
        batches = _pair_batches(path)
        if batches is not None:
            yield from _parquet_pairs(path, batches)
            continue
        for where, row in read_rows(path):
            if "caption_a" in row or "caption_b" in row:
                yield _text(row, "caption_a", where), _text(row, "caption_b", where)
                continue
            if "image_id" not in row:
                raise DataError(f"{where}: column 'image_id' is missing (or give caption_a and caption_b)")
            caption = _text(row, "caption", where)
            if pending is not None and pending[0] == row["image_id"]:
                yield pending[1], caption
                pending = None
            else:
                pending = (row["image_id"], caption)


def _pair_batches(path: Path) -> Iterator[tuple[int, Any]] | None:
    """A Parquet file's batches of its caption pair columns; None for any other file."""
    if path.suffix != ".parquet" or not path.exists():
        return None
    return parquet_batches(path, list(PAIR_COLUMNS))


def _parquet_pairs(path: Path, batches: Iterator[tuple[int, Any]]) -> Iterator[tuple[str, str]]:
    """A Parquet file's caption pairs read a column at a time: a row at a time, the reading cost
    a tenth of what tokenizing them does. Its rows are checked as `_text` checks a row, and the
    first bad one is named as the row-by-row read would name it."""
    for before, batch in batches:
        columns = [batch.column(name) for name in PAIR_COLUMNS]
        firsts, seconds = (column.to_pylist() for column in columns)
        if not (_all_text(columns[0], firsts) and _all_text(columns[1], seconds)):
            for offset, row in enumerate(batch.to_pylist(), start=before + 1):
                for name in PAIR_COLUMNS:
                    _text(row, name, f"{path}: row {offset}")
        yield from zip(firsts, seconds, strict=True)


def _all_text(column: Any, values: list) -> bool:
    """Every value is a string with more than white space."""
    import pyarrow as pa

    is_text = pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
    return is_text and column.null_count == 0 and all(map(str.strip, values))


def iter_documents(shards: list[Path]) -> Iterator[tuple[str, str]]:
    """The two chunks of each row `orch data chunks` wrote, or the two halves of each document
    with at least two words."""
    for where, row in rows_of(shards):
        if "chunk_a" in row or "chunk_b" in row:
            yield _text(row, "chunk_a", where), _text(row, "chunk_b", where)
            continue
        yield from chunk_pairs(_text(row, "text", where), "halves", 0)[0]


def check_files(data: DataConfig, neighbours: int = 0, stacks: bool = False) -> None:
    """Fail fast on the driver: every file exists, the first `CHECKED_ROWS` rows of each training
    file parse, and the eval set aligns and has more items than the largest metric k (its
    references may be layer stacks where `stacks`)."""
    for _ in itertools.islice(iter_pairs(pair_shards(data)), CHECKED_ROWS):
        pass
    if data.documents is not None:
        for _ in itertools.islice(iter_documents(document_shards(data)), CHECKED_ROWS):
            pass
    texts_path = data.resolve(data.eval_texts)
    texts, _ = read_eval(
        texts_path, {name: data.resolve(path) for name, path in data.eval_features}, stacks=stacks
    )
    if len(texts) <= neighbours:
        raise DataError(
            f"{texts_path}: {len(texts)} eval texts, but a metric looks at {neighbours} neighbours "
            "(give more texts or a smaller k)"
        )


Reference = np.ndarray | tuple[np.ndarray, ...]  # one matrix, or a layer stack (rows x width each)


def read_eval(
    texts_path: Path, features: dict[str, Path], stacks: bool = False
) -> tuple[list[str], dict[str, Reference]]:
    """Eval texts and each reference's features, checked to be row-aligned and finite; with
    `stacks`, a reference may be a layer stack (an .npz as `orch features image` writes it)."""
    rows = list(read_rows(texts_path))
    texts = [_text(row, "text", where) for where, row in rows]
    ids = [str(row["id"]) for _, row in rows] if rows and all("id" in row for _, row in rows) else None
    return texts, {
        name: _reference(name, path, texts_path, len(texts), ids, stacks) for name, path in features.items()
    }


def _reference(
    name: str, path: Path, texts_path: Path, count: int, ids: list[str] | None, stacks: bool
) -> Reference:
    from orchestrator.extraction.output import read_sidecar

    arrays = load_arrays(path)
    if len(arrays) != 1 and not stacks:
        raise DataError(
            f"{path}: a stack of {len(arrays)} layers, and eval.scoring orch scores one matrix a "
            f"reference ('{name}'): score the stack with eval.scoring: platonic-rep, or save one layer "
            "with numpy.save"
        )
    layers = []
    for layer, array in arrays:
        where = (
            f"{path} (reference '{name}')" if len(arrays) == 1 else f"{path}[{layer}] (reference '{name}')"
        )
        matrix = check_matrix(array, where)
        if matrix.shape[0] != count:
            raise DataError(f"{where}: {matrix.shape[0]} rows, but {texts_path} has {count} texts")
        layers.append(matrix)
    sidecar = read_sidecar(path)
    if ids is not None and sidecar is not None and len(sidecar["rows"]["ids"]) != len(ids):
        raise DataError(
            f"{path}: its sidecar lists {len(sidecar['rows']['ids'])} row ids, but {texts_path} has "
            f"{len(ids)} texts: make the features from the eval texts' manifest"
        )
    if ids is not None and sidecar is not None and sidecar["rows"]["ids"] != ids:
        row = next(i for i, (a, b) in enumerate(zip(ids, sidecar["rows"]["ids"], strict=True)) if a != b)
        raise DataError(
            f"{path}: row {row} is id {sidecar['rows']['ids'][row]!r} by its sidecar, but {texts_path} "
            f"row {row} is id {ids[row]!r}: make the features from the eval texts' manifest"
        )
    return layers[0] if len(arrays) == 1 else tuple(layers)
