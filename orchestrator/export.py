"""What `orch export` writes: each exported table of a sweep as pandas reads it back, whole.

- Every column the store has, in its order; a column named like a pandas DataFrame attribute
  (`flags`: `frame.flags` is pandas' own) is written as `<table>_<column>` (`gap_flags`).
- The store's JSON lists (`flags`, `reasons`) are lists in Parquet, its JSON text in CSV.
- `laws`: every law of every fitted curve with its Akaike weight (the fits table holds each
  curve's heaviest law; the rest are in its provenance), one row each.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from sqlalchemy import Float, Integer

from db import Store, queries

__all__ = ["FORMULA_STARTS", "ExportTable", "export_tables", "neutralised", "write_csv", "write_parquet"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # OWASP: what a spreadsheet may run as a formula
LISTS = ("flags", "reasons")  # JSON list columns of the store
CURVE = ("objective", "model", "metric", "reference", "eval_set")
LAW_COLUMNS = {  # the laws table: column -> kind
    "fit_id": "int",
    "sweep": "text",
    "objective": "text",
    "model": "text",
    "metric": "text",
    "reference": "text",
    "eval_set": "text",
    "law": "text",
    "weight": "float",
    "heaviest": "int",
    "params": "text",  # JSON: parameter -> value (not `values`: frame.values is pandas' own)
    "errors": "text",  # JSON: parameter -> standard error
    "aicc": "float",
    "loss": "text",
    "created": "float",
}


@dataclass(frozen=True)
class ExportTable:
    """One file's worth: its name, its columns with their kinds (int, float, text, list), and
    its rows as frames a chunk at a time."""

    name: str
    columns: dict[str, str]
    chunks: Iterator[pd.DataFrame]


def export_tables(store: Store, sweep: str) -> Iterator[ExportTable]:
    for name in queries.EXPORTED:
        query = queries.table(name, sweep)
        kinds = {column.name: _kind(column) for column in query.selected_columns}
        names = {column: _exported_name(name, column) for column in kinds}
        chunks = (chunk.rename(columns=names) for chunk in store.table_chunks(name, sweep))
        yield ExportTable(name, {names[c]: kind for c, kind in kinds.items()}, chunks)
    yield ExportTable("laws", LAW_COLUMNS, (_laws(chunk) for chunk in store.table_chunks("fits", sweep)))


def _kind(column: Any) -> str:
    if column.name in LISTS:
        return "list"
    if isinstance(column.type, Integer):
        return "int"
    return "float" if isinstance(column.type, Float) else "text"


def _exported_name(table: str, column: str) -> str:
    return f"{table.removesuffix('s')}_{column}" if hasattr(pd.DataFrame, column) else column


def _laws(fits: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for fit in fits.itertuples(index=False):
        provenance = json.loads(fit.provenance)
        for law, detail in provenance["laws"].items():
            rows.append(
                {
                    "fit_id": fit.id,
                    **{k: getattr(fit, k) for k in ("sweep", *CURVE)},
                    "law": law,
                    "weight": float(provenance["weights"].get(law, 0.0)),
                    "heaviest": int(law == fit.law),
                    "params": json.dumps(detail["values"]),
                    "errors": json.dumps(detail["errors"]),
                    "aicc": detail["aicc"],
                    "loss": detail["loss"],
                    "created": fit.created,
                }
            )
    return pd.DataFrame(rows, columns=list(LAW_COLUMNS))


def write_csv(table: ExportTable, path: Path) -> int:
    """The chunks one after another under one header (lists as the store's JSON); the number of
    rows written. A text cell a spreadsheet would run as a formula is neutralised as OWASP's
    CSV-injection guidance says: a quote goes before it (`orch import` takes it off again)."""
    texts = [name for name, kind in table.columns.items() if kind in ("text", "list")]
    rows = 0
    with path.open("w", newline="") as handle:
        for chunk in table.chunks:
            for name in texts:
                chunk[name] = [neutralised(cell) for cell in chunk[name]]
            chunk.to_csv(handle, index=False, header=rows == 0)
            rows += len(chunk)
        if rows == 0:
            handle.write(",".join(table.columns) + "\n")
    return rows


def neutralised(cell: Any) -> Any:
    """A text cell with a quote before a formula's first character, else the cell as it is."""
    return f"'{cell}" if isinstance(cell, str) and cell.startswith(FORMULA_STARTS) else cell


def write_parquet(table: ExportTable, path: Path) -> int:
    """The chunks as row groups of one Parquet file whose column types are the store's (a
    chunk of all-NULL values keeps its column's type), lists parsed into lists (NULL, in rows
    older than the column, stays null); the number of rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"int": pa.int64(), "float": pa.float64(), "text": pa.string(), "list": pa.list_(pa.string())}
    schema = pa.schema([(name, types[kind]) for name, kind in table.columns.items()])
    lists = [name for name, kind in table.columns.items() if kind == "list"]
    rows = 0
    with pq.ParquetWriter(path, schema) as writer:
        for chunk in table.chunks:
            for name in lists:
                chunk[name] = [None if text is None else json.loads(text) for text in chunk[name]]
            writer.write_table(pa.Table.from_pandas(chunk, schema=schema, preserve_index=False))
            rows += len(chunk)
    return rows
