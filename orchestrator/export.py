"""What `orch export` writes: each exported table of a sweep as pandas reads it back, whole.

- Every column the store has, in its order; a column named like a pandas DataFrame attribute
  (`flags`: `frame.flags` is pandas' own) is written as `<table>_<column>` (`gap_flags`).
- The store's JSON lists (`flags`, `reasons`) are lists in Parquet, JSON text in CSV.
- `laws`: every law of every fitted curve with its Akaike weight (the fits table holds each
  curve's heaviest law; the rest are in its provenance), one row each.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd
from sqlalchemy import Float, Integer

from db import Store, queries

__all__ = ["ExportTable", "export_tables"]

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
        chunks = (_shaped(chunk, names) for chunk in store.table_chunks(name, sweep))
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


def _shaped(chunk: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """The chunk with its lists parsed (NULL, in rows older than the column, stays None) and
    its columns renamed."""
    for column in LISTS:
        if column in chunk:
            chunk[column] = [None if text is None else json.loads(text) for text in chunk[column]]
    return chunk.rename(columns=names)


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
