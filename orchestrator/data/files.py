"""Real data from the files a cluster user has, streamed so that 940M rows never sit in memory.

- pairs: JSONL or Parquet with `image_id, caption_a, caption_b`, or `image_id, caption` with
  several consecutive rows per image (consecutive captions of one image become a pair);
- documents: JSONL with `text`; a document's two halves are its two chunks (bad views);
- eval: JSONL with `text` per row, plus one `.npy` feature matrix per reference, rows aligned.

Every problem is a `DataError` naming the file (and line or column where there is one).
"""

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from orchestrator.data.matrices import DataError, check_matrix, load_arrays
from orchestrator.spec import DataConfig

__all__ = ["CHECKED_ROWS", "DataError", "check_files", "iter_documents", "iter_pairs", "read_eval"]

CHECKED_ROWS = 10_000  # rows of each training file the driver reads before any trial starts


def _rows(path: Path) -> Iterator[tuple[str, dict]]:
    """(where, row) for every row of a JSONL or Parquet file, streamed."""
    if not path.exists():
        raise DataError(f"{path}: no such file (check the data section's paths)")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            parquet = pq.ParquetFile(path)
        except Exception as error:  # pyarrow raises several types for a broken file
            raise DataError(f"{path}: not a readable Parquet file ({error})") from None
        row_number = 0
        batches = parquet.iter_batches(batch_size=8192)
        while True:
            try:
                batch = next(batches, None)
            except Exception as error:  # a corrupted page: OSError, ArrowInvalid, ...
                raise DataError(f"{path}: unreadable after row {row_number} ({error})") from None
            if batch is None:
                return
            for row in batch.to_pylist():
                row_number += 1
                yield f"{path}: row {row_number}", row
    with path.open("rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise DataError(
                    f"{path}:{line_number}: not UTF-8 (byte {error.start + 1}); save as UTF-8"
                ) from None
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise DataError(f"{path}:{line_number}: not JSON ({error.msg})") from None
            if not isinstance(row, dict):
                raise DataError(f"{path}:{line_number}: expected a JSON object per line")
            yield f"{path}:{line_number}", row


def _text(row: dict, column: str, where: str) -> str:
    value = row.get(column)
    if not isinstance(value, str):
        raise DataError(f"{where}: column '{column}' is missing or not text")
    if not value.strip():
        raise DataError(f"{where}: column '{column}' is empty (drop the row or give it text)")
    return value


def iter_pairs(path: Path) -> Iterator[tuple[str, str]]:
    """Two captions of one image per example."""
    pending: tuple[object, str] | None = None
    for where, row in _rows(path):
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


def iter_documents(path: Path) -> Iterator[tuple[str, str]]:
    """The two halves of each document with at least two words."""
    for where, row in _rows(path):
        words = _text(row, "text", where).split()
        if len(words) >= 2:
            middle = len(words) // 2
            yield " ".join(words[:middle]), " ".join(words[middle:])


def check_files(data: DataConfig, neighbours: int = 0) -> None:
    """Fail fast on the driver: every file exists, the first `CHECKED_ROWS` rows of each training
    file parse, and the eval set aligns and has more items than the largest metric k."""
    for _ in itertools.islice(iter_pairs(data.resolve(data.pairs)), CHECKED_ROWS):
        pass
    if data.documents is not None:
        for _ in itertools.islice(iter_documents(data.resolve(data.documents)), CHECKED_ROWS):
            pass
    texts_path = data.resolve(data.eval_texts)
    texts, _ = read_eval(texts_path, {name: data.resolve(path) for name, path in data.eval_features})
    if len(texts) <= neighbours:
        raise DataError(
            f"{texts_path}: {len(texts)} eval texts, but a metric looks at {neighbours} neighbours "
            "(give more texts or a smaller k)"
        )


def read_eval(texts_path: Path, features: dict[str, Path]) -> tuple[list[str], dict[str, np.ndarray]]:
    """Eval texts and each reference's features, checked to be row-aligned and finite."""
    texts = [_text(row, "text", where) for where, row in _rows(texts_path)]
    references = {}
    for name, path in features.items():
        arrays = load_arrays(path)
        if len(arrays) != 1:
            raise DataError(
                f"{path}: {len(arrays)} arrays (reference '{name}' is one matrix: save it with numpy.save)"
            )
        matrix = check_matrix(arrays[0][1], f"{path} (reference '{name}')")
        if matrix.shape[0] != len(texts):
            raise DataError(f"{path}: {matrix.shape[0]} rows, but {texts_path} has {len(texts)} texts")
        references[name] = matrix
    return texts, references
