"""Published results from a CSV, validated row by row, for `orch baselines import`."""

import csv
import math
from collections.abc import Mapping
from pathlib import Path

from db import BaselineRow
from foundation.sizes import SizeError, parse_size
from orchestrator.errors import InputError

__all__ = ["COLUMNS", "read_baselines"]

COLUMNS = ("source", "model", "objective", "metric", "reference", "eval_set", "samples", "value")
OPTIONAL = ("note", "se")  # se: the value's standard error, stated or estimated (say which in note)


def read_baselines(path: Path, widths: Mapping[str, int]) -> list[BaselineRow]:
    """Rows ready for `Store.write_baselines`; any bad cell is an InputError with file and line.
    `widths` are the store's longest names per column (a longer one would fail in Postgres)."""
    try:
        # utf-8-sig: a spreadsheet's byte-order mark is not part of the first column's name
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            header = reader.fieldnames or []
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise InputError(f"{path}: missing column(s) {', '.join(missing)} (header: {COLUMNS})")
            unknown = [c for c in header if c not in COLUMNS + OPTIONAL]
            if unknown:
                raise InputError(f"{path}: unknown column(s) {', '.join(unknown)}")
            return [_row(path, line, raw, widths) for line, raw in enumerate(reader, start=2)]
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(f"{path}: cannot read CSV ({error})") from None


def _row(path: Path, line: int, raw: dict, widths: Mapping[str, int]) -> BaselineRow:
    if None in raw:
        raise InputError(f"{path}:{line}: more cells than the header has columns (quote a cell with a comma)")
    for column in ("source", "model", "metric", "value"):
        if not (raw.get(column) or "").strip():
            raise InputError(f"{path}:{line}: column {column} is empty (every row needs it)")
    for column, cell in raw.items():
        if cell and any(ord(char) < 32 and char not in "\t\n" for char in cell):
            raise InputError(f"{path}:{line}: column {column} holds a control character (a NUL byte?)")
        if cell and len(cell.strip()) > widths.get(column, len(cell)):
            raise InputError(
                f"{path}:{line}: column {column} is {len(cell.strip())} characters, "
                f"longer than the store's {widths[column]} (shorten it)"
            )
    try:
        value = float(raw["value"])
    except ValueError:
        raise InputError(f"{path}:{line}: value {raw['value']!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(f"{path}:{line}: value {raw['value']!r} is not finite")
    se = _se(path, line, (raw.get("se") or "").strip())
    samples = (raw.get("samples") or "").strip()
    try:
        parsed_samples = float(parse_size(samples)) if samples else None
    except SizeError as error:
        raise InputError(f"{path}:{line}: samples: {error}") from None
    return BaselineRow(
        source=raw["source"].strip(),
        model=raw["model"].strip(),
        objective=(raw.get("objective") or "").strip(),
        metric=raw["metric"].strip(),
        reference=(raw.get("reference") or "").strip(),
        eval_set=(raw.get("eval_set") or "").strip(),
        samples=parsed_samples,
        value=value,
        note=(raw.get("note") or "").strip(),
        se=se,
    )


def _se(path: Path, line: int, cell: str) -> float | None:
    """A published value's standard error: a positive number, or empty (none stated)."""
    if not cell:
        return None
    try:
        se = float(cell)
    except ValueError:
        se = math.nan
    if not (math.isfinite(se) and se > 0):
        raise InputError(
            f"{path}:{line}: se {cell!r} is not a positive number (leave it empty where none is known)"
        )
    return se
