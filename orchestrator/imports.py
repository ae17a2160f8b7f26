"""Runs orch did not train (a paper's released logs, a W&B export, `orch export`'s
measurements file), read from CSV or Parquet and checked row by row, for `orch import`.

Each distinct (objective, model, data size, seed) is one trial, keyed by the sweep's name and
those four, so that importing the same file again adds nothing. The sweep records what was
imported (file, its sha256, rows, points design, holdout) as its sweep file: `orch fit` reads
its design from there as from any sweep.

The file is read CHUNK_ROWS rows at a time and checked a column at a time: each distinct value
of a column once (names, sizes and seeds repeat), the numbers as arrays. What is kept of a row
is its parsed numbers and codes, not its text, so 10^6 rows fit in a few hundred MB.
"""

import hashlib
import json
import math
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from db import TRAIN_LOSS, Measurement, TrialRow, TrialStatus
from fits.curve.settings import Points
from foundation.sizes import SizeError, format_size, parse_size
from orchestrator.errors import InputError
from orchestrator.export import FORMULA_STARTS
from orchestrator.sweepfile.catalog import parse_metric
from orchestrator.sweepfile.imported import imported_record

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COLUMNS", "Clock", "ImportedRuns", "read_runs"]

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
CELL = ("trial_key", "samples_seen", "metric", "reference", "eval_set")  # unique in the store
TEXTS = ("objective", "model", "metric", "eval_set")
MORE_SHOWN = 5  # bad rows listed after the first
MAX_SEED, MAX_COUNT = 2**31 - 1, 2**63 - 1  # the store's INTEGER and BIGINTEGER
CHUNK_ROWS = 100_000
Notify = Callable[[str], None]


@dataclass(frozen=True)
class ImportedRuns:
    """What `orch import` records: the sweep's text, its trials and their measurements (one row
    each of `cells`, with the file row it came from in `line`)."""

    spec_text: str
    trials: list[TrialRow]
    cells: "pd.DataFrame"
    n_params: dict[str, int]  # trial key -> parameters, where the file gives them
    samples_seen: dict[str, int]  # trial key -> its last checkpoint

    def measurements(self, size: int = CHUNK_ROWS) -> Iterator[list[Measurement]]:
        """The measurements, `size` at a time (a list of 10^6 at once would take gigabytes);
        Python's own numbers, a missing noise figure None."""
        names = [*CELL, "value", "step", "flops", "wall_s", *NOISE]
        for start in range(0, len(self.cells), size):
            part = self.cells.iloc[start : start + size]
            columns = [part[name].tolist() for name in names]
            yield [Measurement(*(None if v != v else v for v in row)) for row in zip(*columns, strict=True)]

    def changed(self, stored: "pd.DataFrame", path: Path) -> str | None:
        """Where the file gives a value other than the store holds for one of its checkpoints:
        the rows that differ, named, else None (a file that only adds runs changes nothing)."""
        both = self.cells.merge(stored[[*CELL, "value"]], on=list(CELL), suffixes=("", "_stored"))
        differing = both[both.value != both.value_stored].sort_values("line")
        if differing.empty:
            return None
        shown = "; ".join(
            f"row {row.line}: stored {row.value_stored:.6g}, file {row.value:.6g}"
            for row in differing.head(3).itertuples()
        )
        more = f" (and {len(differing) - 3} more)" if len(differing) > 3 else ""
        return f"{path}: {len(differing)} row(s) change values already imported ({shown}{more})"


def read_runs(
    path: Path,
    sweep: str,
    widths: Mapping[str, int],
    points: str,
    holdout_above: int | None,
    claims: str | None = None,
    notify: Notify | None = None,
) -> ImportedRuns:
    """Every row checked (a bad one is an InputError naming it, and the next few bad ones); rows
    of a trial that is not done (an `orch export` of a running sweep) are left out. `claims`:
    the claims file the sweep's record names, as a sweep file would; `notify` hears progress."""
    rows = _checked_rows(path, widths, notify or (lambda _: None))
    design = _design(rows) if Points(points) is Points.AUTO else Points(points)
    record = imported_record(path, sweep, len(rows), design, holdout_above)
    if claims is not None:
        record["claims"] = str(Path(claims).resolve())
    return _runs(path, sweep, rows, json.dumps(record), design)


def _checked_rows(path: Path, widths: Mapping[str, int], notify: Notify) -> "pd.DataFrame":
    import pandas as pd

    parts, bad, read = [], [], 0
    clock = Clock()
    for first_line, frame in _chunks(path):
        missing = [c for c in COLUMNS if c not in frame.columns]
        if missing:
            raise InputError(f"{path}: missing column(s) {', '.join(missing)} (needs {', '.join(COLUMNS)})")
        lines = first_line + np.arange(len(frame))
        read += len(frame)
        if "status" in frame.columns:
            done = (frame.status.astype(str) == TrialStatus.DONE).to_numpy()
            frame, lines = frame[done], lines[done]
        parsed, errors = _checked(frame.reset_index(drop=True), widths)
        parsed["line"] = lines
        parts.append(parsed[[error is None for error in errors]])
        bad += [(int(line), error) for line, error in zip(lines, errors, strict=True) if error]
        if clock.due():
            notify(f"{path}: {read:,} rows read and checked")
    if bad:
        (first, why), later = bad[0], [str(line) for line, _ in bad[1:]]
        listed = ", ".join(later[:MORE_SHOWN]) + (", ..." if len(later) > MORE_SHOWN else "")
        more = f" (and {len(later)} more bad rows: {listed})" if later else ""
        raise InputError(f"{path}: row {first}: {why}{more}; nothing was imported")
    rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if rows.empty:
        raise InputError(f"{path}: no rows to import (a header alone, or no trial done)")
    return rows


class Clock:
    """Says when a progress line is due: every NOTICE_S seconds."""

    NOTICE_S = 2.0

    def __init__(self) -> None:
        self._last = time.monotonic()

    def due(self) -> bool:
        now = time.monotonic()
        if now - self._last < self.NOTICE_S:
            return False
        self._last = now
        return True


def _chunks(path: Path) -> Iterator[tuple[int, "pd.DataFrame"]]:
    """(the file row of the chunk's first row, the chunk): CSV as text (the header is row 1),
    Parquet as stored, CHUNK_ROWS rows at a time."""
    import pandas as pd

    if path.suffix not in (".csv", ".parquet"):
        raise InputError(f"{path}: give a .csv or .parquet file")
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            batches = (b.to_pandas() for b in pq.ParquetFile(path).iter_batches(batch_size=CHUNK_ROWS))
        else:
            batches = pd.read_csv(
                path, dtype=str, keep_default_na=False, encoding="utf-8-sig", chunksize=CHUNK_ROWS
            )
        line = 2
        for frame in batches:
            yield line, frame
            line += len(frame)
    except (OSError, ValueError, UnicodeDecodeError) as error:
        raise InputError(
            f"{path}: cannot read ({type(error).__name__}: {str(error).splitlines()[0]})"
        ) from None


def _checked(frame: "pd.DataFrame", widths: Mapping[str, int]) -> tuple["pd.DataFrame", list[str | None]]:
    """The chunk's columns parsed, and each row's first error (None for a good row), the checks
    in the order a reader fixes them: names, sizes, seed, numbers."""
    import pandas as pd

    errors: list[str | None] = [None] * len(frame)
    parsed: dict[str, Any] = {}

    def take(column: str | None, values: list, found: list[str | None]) -> None:
        """Keep the column's values (None: a check with nothing to keep) and its first errors."""
        if column is not None:
            parsed[column] = values
        for i, error in enumerate(found):
            if error is not None and errors[i] is None:
                errors[i] = error

    for column in TEXTS:
        take(column, *_each(frame[column], lambda cell, c=column: _text(cell, c, widths)))
    loss = [metric == TRAIN_LOSS for metric in parsed["metric"]]  # a training loss has no reference
    take("reference", *_each(frame["reference"], lambda cell: _text(cell, "reference", widths), loss, ""))
    _, unknown = _each(frame["metric"], _known_metric)
    take(None, [], [None if is_loss else error for error, is_loss in zip(unknown, loss, strict=True)])
    for column in ("data_size", "samples_seen"):
        take(column, *_each(frame[column], lambda cell, c=column: _count(cell, c)))
    take("seed", *_each(frame["seed"], _seed))
    budgets = _each(_column(frame, "budget_samples"), lambda cell: _count(cell, "budget_samples"), True)
    take("budget_samples", *budgets)
    parsed["budget_samples"] = [
        size if given is None else given
        for given, size in zip(parsed["budget_samples"], parsed["data_size"], strict=True)
    ]
    past = [
        None
        if seen is None or budget is None or seen <= budget
        else f"samples_seen {format_size(seen)} is past the run's {format_size(budget)}"
        for seen, budget in zip(parsed["samples_seen"], parsed["budget_samples"], strict=True)
    ]
    take(None, [], past)
    take("n_params", *_each(_column(frame, "n_params"), _params, True))
    take("value", *_numbers(frame["value"], "value", optional=False))
    for column in (*NOISE, "flops", "wall_s", "step"):
        take(column, *_numbers(_column(frame, column), column, optional=True))
    held = _column(frame, "held_out").astype(str).str.strip()
    out = pd.DataFrame({c: parsed[c] for c in (*TEXTS, "reference", "data_size", "samples_seen", "seed")})
    out["budget_samples"] = parsed["budget_samples"]
    out["n_params"] = parsed["n_params"]
    for column in ("value", *NOISE):
        out[column] = parsed[column]
    out["flops"] = np.nan_to_num(np.asarray(parsed["flops"], float))
    out["wall_s"] = np.nan_to_num(np.asarray(parsed["wall_s"], float))
    out["step"] = np.nan_to_num(np.asarray(parsed["step"], float)).astype(np.int64)
    out["held_out"] = held.isin(("1", "True", "true")).to_numpy()
    return out, errors


def _column(frame: "pd.DataFrame", column: str) -> "pd.Series":
    import pandas as pd

    return frame[column] if column in frame else pd.Series([""] * len(frame), index=frame.index)


def _each(
    cells: "pd.Series", check: Callable[[Any], Any], blank_ok: bool | list[bool] = False, blank: Any = None
) -> tuple[list, list[str | None]]:
    """`check` on each distinct cell once: (parsed values, errors) a row each. A blank cell of
    a row where `blank_ok` (one flag for all, or one a row) is `blank`, unchecked."""
    import pandas as pd

    codes, uniques = pd.factorize(cells, use_na_sentinel=False)
    results, empty = [], [_blank(cell) for cell in uniques]
    for cell in uniques:
        try:
            results.append((check(cell), None))
        except ValueError as error:
            results.append((None, str(error)))
    allowed = [blank_ok] * len(codes) if isinstance(blank_ok, bool) else blank_ok
    found = [
        (blank, None) if ok and empty[code] else results[code]
        for code, ok in zip(codes, allowed, strict=True)
    ]
    return [value for value, _ in found], [error for _, error in found]


def _numbers(cells: "pd.Series", column: str, optional: bool) -> tuple[np.ndarray, list[str | None]]:
    """The column as floats (NaN where blank and optional), and the error of each cell that is
    not a finite (non-negative, where optional) number."""
    import pandas as pd

    numbers = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=float)
    blank = np.array([_blank(cell) for cell in cells]) if optional else np.zeros(len(cells), bool)
    wrong = ~np.isfinite(numbers) | (optional & (numbers < 0))
    errors: list[str | None] = [None] * len(cells)
    for i in np.flatnonzero(wrong & ~blank):
        try:
            _number(cells.iloc[i], column, optional)
        except ValueError as error:
            errors[i] = str(error)
    return np.where(blank, np.nan, numbers), errors


def _blank(cell: Any) -> bool:
    """An empty cell: missing, empty text, or Parquet's null (a float NaN)."""
    return cell is None or (isinstance(cell, float) and math.isnan(cell)) or str(cell).strip() == ""


def _text(cell: Any, column: str, widths: Mapping[str, int]) -> str:
    value = str(cell).strip()
    if value.startswith("'") and value[1:].startswith(FORMULA_STARTS):
        value = value[1:]  # `orch export` neutralised it for spreadsheets
    if not value or value == "nan":
        raise ValueError(f"{column} is empty")
    if control := next((char for char in value if ord(char) < 32 or ord(char) == 127), None):
        raise ValueError(f"{column} holds a control character (U+{ord(control):04X}); remove it")
    if len(value) > widths[column]:
        raise ValueError(f"{column} is {len(value)} characters, longer than the store's {widths[column]}")
    return value


def _known_metric(cell: Any) -> bool:
    metric = str(cell).strip()
    try:
        parse_metric(metric.split("/")[0])
    except ValueError as error:
        raise ValueError(f"metric {metric!r}: {error}") from None
    return True


def _count(cell: Any, column: str) -> int:
    """A sample count: 21.6M or 21600000, and 0 (a random-init checkpoint)."""
    if str(cell).strip() == "0":
        return 0
    try:
        count = parse_size(cell if isinstance(cell, str) else int(cell))
    except (SizeError, ValueError, TypeError, OverflowError):
        count = None
    if count is None or count > MAX_COUNT:
        raise ValueError(f"{column} {cell!r} is not a sample count (write 21.6M or 21600000)")
    return count


def _seed(cell: Any) -> int:
    seed = _number(cell, "seed")
    if seed != int(seed) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed {cell!r} is not a whole number from 0 to {MAX_SEED}")
    return int(seed)


def _params(cell: Any) -> int:
    n_params = _number(cell, "n_params", optional=True)
    if n_params != int(n_params) or n_params > MAX_COUNT:
        raise ValueError(f"n_params {cell!r} is not a whole number of parameters")
    return int(n_params)


def _number(cell: Any, column: str, optional: bool = False) -> float:
    """A finite number (non-negative where `optional`: se, flops, counts); the text 'nan' is
    refused like any number that is not finite."""
    try:
        value = float(cell)
    except (TypeError, ValueError):
        raise ValueError(f"{column} {cell!r} is not a number") from None
    if not math.isfinite(value) or (optional and value < 0):
        raise ValueError(f"{column} {cell!r} is not a finite{' non-negative' if optional else ''} number")
    return value


def _design(rows: "pd.DataFrame") -> Points:
    """'all' when each (objective, model, seed) is one run with several checkpoints (the
    checkpoints of a constant-rate run are its curve), else 'final' (one run per size)."""
    runs = rows.groupby(["objective", "model", "seed"])
    one_run = bool((runs.data_size.nunique() == 1).all())
    return Points.ALL if one_run and bool((runs.samples_seen.nunique() > 2).all()) else Points.FINAL


def _runs(path: Path, sweep: str, rows: "pd.DataFrame", record: str, points: Points) -> ImportedRuns:
    schedule = "constant" if points is Points.ALL else "unknown"
    train = {"schedule": schedule, "recipe": f"unknown: imported from {path.name}"}
    firsts = rows.drop_duplicates(list(TRIAL))
    keys, trials = {}, []
    for row in firsts.itertuples(index=False):
        identity = {"imported": sweep} | {k: getattr(row, k) for k in TRIAL}
        identity["data_size"], identity["seed"] = int(row.data_size), int(row.seed)
        key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
        keys[tuple(identity[k] for k in TRIAL)] = key
        trials.append(
            TrialRow(
                key,
                json.dumps(identity | {"train": train}),
                *(identity[k] for k in TRIAL),
                budget_samples=int(row.budget_samples),
                held_out=bool(row.held_out),
            )
        )
    rows = rows.assign(
        trial_key=[keys[t] for t in zip(*(rows[k] for k in TRIAL), strict=True)]
    ).drop_duplicates([*CELL, "value"])
    repeated = rows[rows.duplicated(list(CELL))]
    if not repeated.empty:
        line = int(repeated.line.min())
        raise InputError(f"{path}: row {line} gives another value for a checkpoint an earlier row gave")
    seen = rows.groupby("trial_key").samples_seen.max()
    given = rows.dropna(subset=["n_params"]).groupby("trial_key").n_params.last()
    return ImportedRuns(
        record,
        trials,
        rows.sort_values("line", kind="stable").reset_index(drop=True),
        {key: int(n) for key, n in given.items()},
        {key: int(s) for key, s in seen.items()},
    )
