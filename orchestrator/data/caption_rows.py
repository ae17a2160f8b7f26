"""(image id, caption) rows from the files researchers hold, in batches: COCO-style caption JSON
(`annotations: [{image_id, caption}]`), or a CSV, JSONL (plain, .gz, .zst) or Parquet file with
`image_id` and `caption` columns. Every bad row is one `DataError` naming the file and the row.

A COCO file is one JSON document and is read whole (COCO's 616K captions are ~90 MB); the row
formats stream, so a 10^8-row file never sits in memory."""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.data.matrices import DataError
from orchestrator.data.shards import parquet_batches, read_rows

__all__ = ["BATCH_ROWS", "CaptionBatch", "caption_batches", "row_name"]

BATCH_ROWS = 65_536
COLUMNS = ("image_id", "caption")


@dataclass(frozen=True)
class CaptionBatch:
    """Consecutive rows of one file: its ids (as text), captions and each row's place (line or row
    number, or annotation index), for naming a row in an error later."""

    ids: list[str]
    captions: list[str]
    places: list[int]


def row_name(path: Path, place: int) -> str:
    """How an error names a row of `path`: its line in JSONL, its index in COCO, else its row."""
    if _kind(path) == "jsonl":
        return f"{path}:{place}"
    if _kind(path) == "coco":
        return f"{path}: annotations[{place}]"
    return f"{path}: row {place}"


def caption_batches(path: Path) -> Iterator[CaptionBatch]:
    """Every row of `path` in order, BATCH_ROWS at a time."""
    if not path.is_file():
        raise DataError(f"{path}: no such file (give a COCO captions .json, or a .csv, .jsonl or .parquet)")
    reader = {"coco": _coco, "jsonl": _jsonl, "parquet": _parquet, "csv": _csv}[_kind(path)]
    yield from reader(path)


def _kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".json"):
        return "coco"
    if name.endswith((".jsonl", ".jsonl.gz", ".jsonl.zst")):
        return "jsonl"
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(".csv"):
        return "csv"
    raise DataError(f"{path}: not a captions file (give a COCO .json, or a .csv, .jsonl or .parquet)")


def _checked(where: str, row: dict) -> tuple[str, str]:
    """A row's (image id as text, caption), or the one-line error that names what is wrong."""
    if row.get("image_id") in (None, ""):
        raise DataError(f"{where}: no image_id (every row needs image_id and caption)")
    image_id, caption = row["image_id"], row.get("caption")
    if not isinstance(image_id, (str, int)) or isinstance(image_id, bool):
        raise DataError(f"{where}: image_id {image_id!r} is not a number or a non-empty string")
    if not isinstance(caption, str):
        raise DataError(f"{where}: caption is missing or not text")
    if not caption.strip():
        raise DataError(f"{where}: caption is empty (drop the row or give it text)")
    return str(image_id), caption


def _batched(rows: Iterator[tuple[int, str, dict]]) -> Iterator[CaptionBatch]:
    ids, captions, places = [], [], []
    for place, where, row in rows:
        image_id, caption = _checked(where, row)
        ids.append(image_id)
        captions.append(caption)
        places.append(place)
        if len(ids) == BATCH_ROWS:
            yield CaptionBatch(ids, captions, places)
            ids, captions, places = [], [], []
    if ids:
        yield CaptionBatch(ids, captions, places)


def _coco(path: Path) -> Iterator[CaptionBatch]:
    try:
        document = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise DataError(f"{path}: not JSON ({error}); give COCO captions or a .jsonl of rows") from None
    annotations = document.get("annotations") if isinstance(document, dict) else None
    if not isinstance(annotations, list):
        raise DataError(f"{path}: no 'annotations' list (COCO captions hold {{image_id, caption}} there)")
    rows = ((i, row_name(path, i), row if isinstance(row, dict) else {}) for i, row in enumerate(annotations))
    yield from _batched(rows)


def _jsonl(path: Path) -> Iterator[CaptionBatch]:
    rows = ((int(where.rsplit(":", 1)[1]), where, row) for where, row in read_rows(path))
    yield from _batched(rows)


def _parquet(path: Path) -> Iterator[CaptionBatch]:
    batches = parquet_batches(path, list(COLUMNS))
    if batches is None:
        raise DataError(f"{path}: no image_id or caption column (every row needs both)")
    for before, batch in batches:
        yield from _columns(path, before, batch)


def _csv(path: Path) -> Iterator[CaptionBatch]:
    import pyarrow as pa
    from pyarrow import csv

    try:
        reader = csv.open_csv(
            path,
            read_options=csv.ReadOptions(block_size=1 << 22),
            convert_options=csv.ConvertOptions(
                column_types={"image_id": pa.string(), "caption": pa.string()}
            ),
        )
    except pa.ArrowException as error:
        raise DataError(f"{path}: not a readable CSV ({error})") from None
    missing = [name for name in COLUMNS if name not in reader.schema.names]
    if missing:
        raise DataError(f"{path}: no {' or '.join(missing)} column in its header (every row needs both)")
    before = 0
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except pa.ArrowException as error:
            raise DataError(f"{path}: unreadable after row {before} ({error})") from None
        yield from _columns(path, before, batch.select(list(COLUMNS)))
        before += batch.num_rows


def _columns(path: Path, before: int, batch: Any) -> Iterator[CaptionBatch]:
    """A columnar batch as checked rows (numbered from 1, a CSV's header not counted)."""
    ids = batch.column("image_id").to_pylist()
    captions = batch.column("caption").to_pylist()
    rows = (
        (before + i + 1, row_name(path, before + i + 1), {"image_id": image_id, "caption": caption})
        for i, (image_id, caption) in enumerate(zip(ids, captions, strict=True))
    )
    yield from _batched(rows)
