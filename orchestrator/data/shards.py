"""Training files as shards: a path, a glob, or a list of them; JSONL (plain, .gz or .zst) or
Parquet, streamed row by row.

A role's shards are read in one order on every node: their resolved paths sorted, then permuted
with the fixed seed `SHARD_SEED`. A trial of data size D reads the first D examples of that
order, so a larger data size extends a smaller one's data, and a shard sorted by source or date
does not decide on its own what the smallest runs see. The trial key covers the paths and globs
as written, not the files they match: add new shards under a new name.
"""

import glob
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from orchestrator.data.matrices import DataError

__all__ = ["SHARD_SEED", "parquet_batches", "read_rows", "resolve_shards", "rows_of"]

SHARD_SEED = 0
SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".parquet")


def resolve_shards(patterns: str | tuple[str, ...], base_dir: Path, field: str) -> list[Path]:
    """Every file the paths or globs name (relative ones against `base_dir`), in the read order."""
    found: set[Path] = set()
    for pattern in (patterns,) if isinstance(patterns, str) else patterns:
        full = base_dir / pattern
        matches = (
            [Path(p) for p in glob.glob(str(full), recursive=True)] if glob.has_magic(pattern) else [full]
        )
        if glob.has_magic(pattern) and not matches:
            raise DataError(f"{field}: {pattern!r} matches no file under {base_dir}")
        found.update(path.resolve() for path in matches)
    for path in found:
        if not path.name.endswith(SUFFIXES):
            raise DataError(f"{path}: not a shard ({field} takes {', '.join(SUFFIXES)})")
    ordered = sorted(found)
    return [ordered[i] for i in np.random.default_rng(SHARD_SEED).permutation(len(ordered))]


def rows_of(shards: list[Path]) -> Iterator[tuple[str, dict]]:
    """(where, row) for every row of every shard, in order."""
    for path in shards:
        yield from read_rows(path)


def read_rows(path: Path) -> Iterator[tuple[str, dict]]:
    """(where, row) for every row of one JSONL or Parquet file, streamed."""
    if not path.exists():
        raise DataError(f"{path}: no such file (check the data section's paths)")
    if path.suffix == ".parquet":
        yield from _parquet_rows(path)
        return
    import pyarrow as pa

    line_number = 0
    try:
        with pa.input_stream(str(path), compression="detect") as stream:  # .gz and .zst by suffix
            for line_number, raw in enumerate(io.BufferedReader(stream, 1 << 20), start=1):
                if raw.strip():
                    yield f"{path}:{line_number}", _json_row(path, line_number, raw)
    except (OSError, pa.ArrowException) as error:  # a broken or truncated compressed file
        raise DataError(f"{path}: unreadable after line {line_number} ({error})") from None


def _json_row(path: Path, line_number: int, raw: bytes) -> dict:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DataError(f"{path}:{line_number}: not UTF-8 (byte {error.start + 1}); save as UTF-8") from None
    try:
        row = json.loads(line)
    except json.JSONDecodeError as error:
        raise DataError(f"{path}:{line_number}: not JSON ({error.msg})") from None
    if not isinstance(row, dict):
        raise DataError(f"{path}:{line_number}: expected a JSON object per line")
    return row


def _parquet_rows(path: Path) -> Iterator[tuple[str, dict]]:
    for before, batch in parquet_batches(path) or ():
        for offset, row in enumerate(batch.to_pylist(), start=before + 1):
            yield f"{path}: row {offset}", row


def parquet_batches(path: Path, columns: list[str] | None = None) -> Iterator[tuple[int, Any]] | None:
    """(rows before it, batch) for every record batch of a Parquet file, of `columns` (all when
    None); None when the file lacks one of `columns`. The file is opened once."""
    parquet = _parquet_file(path)
    if columns is not None and not set(columns) <= set(parquet.schema_arrow.names):
        return None
    return _batches(path, parquet.iter_batches(batch_size=8192, columns=columns))


def parquet_rows(path: Path, columns: list[str]) -> int | None:
    """A Parquet file's row count from its footer, read without a row (None: it lacks a column)."""
    parquet = _parquet_file(path)
    if not set(columns) <= set(parquet.schema_arrow.names):
        return None
    return int(parquet.metadata.num_rows)


def _batches(path: Path, batches: Iterator[Any]) -> Iterator[tuple[int, Any]]:
    before = 0
    while True:
        try:
            batch = next(batches, None)
        except Exception as error:  # a corrupted page: OSError, ArrowInvalid, ...
            raise DataError(f"{path}: unreadable after row {before} ({error})") from None
        if batch is None:
            return
        yield before, batch
        before += batch.num_rows


def _parquet_file(path: Path) -> Any:
    import pyarrow.parquet as pq

    try:  # no pre-buffering: it keeps every row group read until the file closes (185 MiB of 10^7 rows)
        return pq.ParquetFile(path, pre_buffer=False)
    except Exception as error:  # pyarrow raises several types for a broken file
        raise DataError(f"{path}: not a readable Parquet file ({error})") from None
