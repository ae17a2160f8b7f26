"""The cells of an `orch import` file checked a column at a time: each distinct value of a
column once (names, sizes and seeds repeat), the numbers as arrays; each row's first error in
the order a reader fixes them (names, sizes, seed, numbers)."""

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from db import TRAINING_ROWS
from foundation.sizes import SizeError, format_size, parse_size
from orchestrator.export import FORMULA_STARTS
from orchestrator.sweepfile.catalog import parse_metric

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COLUMNS", "NOISE", "checked"]

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
TEXTS = ("objective", "model", "metric", "eval_set")
MAX_SEED, MAX_COUNT = 2**31 - 1, 2**63 - 1  # the store's INTEGER and BIGINTEGER


def checked(frame: "pd.DataFrame", widths: Mapping[str, int]) -> tuple["pd.DataFrame", list[str | None]]:
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
    # a training row (loss, tokens or positions per sample) has no reference and no catalog metric
    training = [metric in TRAINING_ROWS for metric in parsed["metric"]]
    take("reference", *_each(frame["reference"], lambda cell: _text(cell, "reference", widths), training, ""))
    _, unknown = _each(frame["metric"], _known_metric)
    take(None, [], [None if train else error for error, train in zip(unknown, training, strict=True)])
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
    blank = np.array([_blank(cell) for cell in cells], dtype=bool) if optional else np.zeros(len(cells), bool)
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
