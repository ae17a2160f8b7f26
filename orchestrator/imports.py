"""Runs orch did not train (a paper's released logs, a W&B export, `orch export`'s
measurements file), read from CSV or Parquet and checked row by row, for `orch import`.

Each distinct (objective, model, data size, seed) is one trial, keyed by the sweep's name and
those four, so that importing the same file again adds nothing. The sweep records what was
imported (file, its sha256, rows, points design, holdout) as its sweep file: `orch fit` reads
its design from there as from any sweep.
"""

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from db import TRAIN_LOSS, Measurement, TrialRow, TrialStatus
from fits.curve.settings import Points
from foundation.sizes import SizeError, format_size, parse_size
from orchestrator.errors import InputError
from orchestrator.export import FORMULA_STARTS
from orchestrator.sweepfile.catalog import parse_metric
from orchestrator.sweepfile.imported import imported_record

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COLUMNS", "ImportedRuns", "read_runs"]

NOISE = ("se", "null_mean", "null_p95", "chance")  # what `orch export` gives of a score's noise
COLUMNS = (
    "objective",
    "model",
    "data_size",
    "seed",
    "samples_seen",
    "metric",
    "reference",
    "eval_set",
    "value",
)
OPTIONAL = ("se", "flops", "budget_samples", "held_out", "n_params", "status", *NOISE, "step", "wall_s")
TRIAL = ("objective", "model", "data_size", "seed")
MORE_SHOWN = 5  # bad rows listed after the first
MAX_SEED, MAX_COUNT = 2**31 - 1, 2**63 - 1  # the store's INTEGER and BIGINTEGER


@dataclass(frozen=True)
class ImportedRuns:
    """What `orch import` records: the sweep's text, its trials and their measurements."""

    spec_text: str
    trials: list[TrialRow]
    measurements: list[Measurement]
    n_params: dict[str, int]  # trial key -> parameters, where the file gives them
    samples_seen: dict[str, int]  # trial key -> its last checkpoint
    lines: dict[tuple, int]  # a measurement's cell (key, samples, metric, reference, eval set) -> its row

    def changed(self, stored: "pd.DataFrame", path: Path) -> str | None:
        """Where the file gives a value other than the store holds for one of its checkpoints:
        the rows that differ, named, else None (a file that only adds runs changes nothing)."""
        held = {_cell(m): m.value for m in stored.itertuples(index=False)}
        differing = [
            (self.lines[cell], held[cell], m.value)
            for m in self.measurements
            if (cell := _cell(m)) in held and held[cell] != m.value
        ]
        if not differing:
            return None
        shown = "; ".join(
            f"row {line}: stored {old:.6g}, file {new:.6g}" for line, old, new in sorted(differing)[:3]
        )
        more = f" (and {len(differing) - 3} more)" if len(differing) > 3 else ""
        return f"{path}: {len(differing)} row(s) change values already imported ({shown}{more})"


def _cell(measurement: Any) -> tuple:
    """What a measurement is measured at: unique in the store."""
    m = measurement
    return (m.trial_key, m.samples_seen, m.metric, m.reference, m.eval_set)


def read_runs(
    path: Path,
    sweep: str,
    widths: Mapping[str, int],
    points: str,
    holdout_above: int | None,
    claims: str | None = None,
) -> ImportedRuns:
    """Every row checked (a bad one is an InputError naming it, and the next few bad ones); rows
    of a trial that is not done (an `orch export` of a running sweep) are left out. `claims`:
    the claims file the sweep's record names, as a sweep file would."""
    frame = _read_frame(path)
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)} (needs {', '.join(COLUMNS)})")
    if "status" in frame.columns:
        frame = frame[frame.status.astype(str) == TrialStatus.DONE]
    if frame.empty:
        raise InputError(f"{path}: no rows to import (a header alone, or no trial done)")
    rows, bad = [], []
    for number, raw in enumerate(frame.to_dict("records"), start=2):
        try:
            rows.append(_row(raw, widths))
        except ValueError as error:
            bad.append((number, error))
    if bad:
        (first, why), later = bad[0], [str(number) for number, _ in bad[1:]]
        listed = ", ".join(later[:MORE_SHOWN]) + (", ..." if len(later) > MORE_SHOWN else "")
        more = f" (and {len(later)} more bad rows: {listed})" if later else ""
        raise InputError(f"{path}: row {first}: {why}{more}; nothing was imported")
    design = _design(rows) if Points(points) is Points.AUTO else Points(points)
    record = imported_record(path, sweep, len(rows), design, holdout_above)
    if claims is not None:
        record["claims"] = str(Path(claims).resolve())
    return _runs(path, sweep, rows, json.dumps(record), design)


def _read_frame(path: Path) -> Any:
    import pandas as pd

    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        if path.suffix == ".csv":
            return pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except (OSError, ValueError, UnicodeDecodeError) as error:
        raise InputError(
            f"{path}: cannot read ({type(error).__name__}: {str(error).splitlines()[0]})"
        ) from None
    raise InputError(f"{path}: give a .csv or .parquet file")


def _text(raw: dict, column: str, widths: Mapping[str, int]) -> str:
    value = str(raw[column]).strip()
    if value.startswith("'") and value[1:].startswith(FORMULA_STARTS):
        value = value[1:]  # `orch export` neutralised it for spreadsheets
    if not value or value == "nan":
        raise ValueError(f"{column} is empty")
    if control := next((char for char in value if ord(char) < 32 or ord(char) == 127), None):
        raise ValueError(f"{column} holds a control character (U+{ord(control):04X}); remove it")
    if len(value) > widths[column]:
        raise ValueError(f"{column} is {len(value)} characters, longer than the store's {widths[column]}")
    return value


def _count(raw: dict, column: str) -> int:
    """A sample count: 21.6M or 21600000, and 0 (a random-init checkpoint)."""
    cell = raw[column]
    if str(cell).strip() == "0":
        return 0
    try:
        count = parse_size(cell if isinstance(cell, str) else int(cell))
    except (SizeError, ValueError, TypeError, OverflowError):
        count = None
    if count is None or count > MAX_COUNT:
        raise ValueError(f"{column} {raw[column]!r} is not a sample count (write 21.6M or 21600000)")
    return count


def _blank(cell: Any) -> bool:
    """An empty cell: missing, empty text, or Parquet's null (a float NaN)."""
    return cell is None or (isinstance(cell, float) and math.isnan(cell)) or str(cell).strip() == ""


def _number(raw: dict, column: str, optional: bool = False) -> float | None:
    """A finite number; an optional column's empty cell (or Parquet's null, a float NaN) is
    None, while the text 'nan' is refused like any number that is not finite."""
    cell = raw.get(column)
    if optional and _blank(cell):
        return None
    try:
        value = float(cell)
    except (TypeError, ValueError):
        raise ValueError(f"{column} {cell!r} is not a number") from None
    if not math.isfinite(value) or (optional and value < 0):
        raise ValueError(f"{column} {cell!r} is not a finite{' non-negative' if optional else ''} number")
    return value


def _row(raw: dict, widths: Mapping[str, int]) -> dict:
    row = {c: _text(raw, c, widths) for c in ("objective", "model", "metric", "eval_set")}
    if row["metric"] == TRAIN_LOSS:  # a trial's training loss, as `orch export` writes it: no reference
        row["reference"] = "" if _blank(raw.get("reference")) else _text(raw, "reference", widths)
    else:
        row["reference"] = _text(raw, "reference", widths)
        try:
            parse_metric(row["metric"].split("/")[0])
        except ValueError as error:
            raise ValueError(f"metric {row['metric']!r}: {error}") from None
    row |= {c: _count(raw, c) for c in ("data_size", "samples_seen")}
    seed = _number(raw, "seed")
    if seed != int(seed) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed {raw['seed']!r} is not a whole number from 0 to {MAX_SEED}")
    budget = _count(raw, "budget_samples") if str(raw.get("budget_samples", "")).strip() else row["data_size"]
    if row["samples_seen"] > budget:
        raise ValueError(
            f"samples_seen {format_size(row['samples_seen'])} is past the run's {format_size(budget)}"
        )
    n_params = _number(raw, "n_params", optional=True)
    if n_params is not None and not (n_params == int(n_params) and n_params <= MAX_COUNT):
        raise ValueError(f"n_params {raw['n_params']!r} is not a whole number of parameters")
    row |= {"seed": int(seed), "value": _number(raw, "value"), "budget_samples": budget}
    row |= {column: _number(raw, column, optional=True) for column in NOISE}
    row |= {column: _number(raw, column, optional=True) or 0.0 for column in ("flops", "wall_s")}
    row["step"] = int(_number(raw, "step", optional=True) or 0)
    row |= {"held_out": str(raw.get("held_out", "0")).strip() in ("1", "True", "true")}
    return row | {"n_params": None if n_params is None else int(n_params)}


def _design(rows: list[dict]) -> Points:
    """'all' when each (objective, model, seed) is one run with several checkpoints (the
    checkpoints of a constant-rate run are its curve), else 'final' (one run per size)."""
    sizes: dict[tuple, set[int]] = {}
    checkpoints: dict[tuple, set[int]] = {}
    for row in rows:
        run = (row["objective"], row["model"], row["seed"])
        sizes.setdefault(run, set()).add(row["data_size"])
        checkpoints.setdefault(run, set()).add(row["samples_seen"])
    one_run = all(len(s) == 1 for s in sizes.values())
    return Points.ALL if one_run and all(len(c) > 2 for c in checkpoints.values()) else Points.FINAL


def _runs(path: Path, sweep: str, rows: list[dict], record: str, points: Points) -> ImportedRuns:
    trials: dict[str, TrialRow] = {}
    measurements: dict[tuple, Measurement] = {}
    n_params: dict[str, int] = {}
    seen: dict[str, int] = {}
    lines: dict[tuple, int] = {}
    schedule = "constant" if points is Points.ALL else "unknown"
    for number, row in enumerate(rows, start=2):
        identity = {"imported": sweep} | {k: row[k] for k in TRIAL}
        key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
        config = json.dumps(
            identity | {"train": {"schedule": schedule, "recipe": f"unknown: imported from {path.name}"}}
        )
        trials.setdefault(
            key,
            TrialRow(
                key,
                config,
                *(row[k] for k in TRIAL),
                budget_samples=row["budget_samples"],
                held_out=row["held_out"],
            ),
        )
        cell = (key, row["samples_seen"], row["metric"], row["reference"], row["eval_set"])  # as _cell
        noise = (row[column] for column in NOISE)
        found = Measurement(*cell, row["value"], row["step"], row["flops"], row["wall_s"], *noise)
        if cell in measurements and measurements[cell].value != found.value:
            raise InputError(f"{path}: row {number} gives another value for a checkpoint an earlier row gave")
        measurements[cell] = found
        lines.setdefault(cell, number)
        seen[key] = max(seen.get(key, 0), row["samples_seen"])
        if row["n_params"] is not None:
            n_params[key] = row["n_params"]
    return ImportedRuns(record, list(trials.values()), list(measurements.values()), n_params, seen, lines)
