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
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from db import Measurement, TrialRow, TrialStatus
from fits.curve.settings import Points
from orchestrator.errors import InputError
from orchestrator.imports.cells import COLUMNS, NOISE, checked
from orchestrator.sweepfile.imported import imported_record

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Clock", "ImportedRuns", "read_runs"]

TRIAL = ("objective", "model", "data_size", "seed")
CELL = ("trial_key", "samples_seen", "metric", "reference", "eval_set")  # unique in the store
MORE_SHOWN = 5  # bad rows listed after the first
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
        parsed, errors = checked(frame.reset_index(drop=True), widths)
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
