"""Readers for one YAML field each: they check a value and raise `FieldError` with its path.

The sweep-file parser composes them; the path (`grid.data_size[2]`) travels with the error so
the message can name the file, the field and the fix.
"""

import difflib
import math
import reprlib
from collections.abc import Mapping, Sequence
from typing import Any

from foundation.errors import InputError
from foundation.sizes import SizeError, parse_size

__all__ = [
    "FieldError",
    "read_choice",
    "read_int",
    "read_list",
    "read_mapping",
    "read_number",
    "read_size",
    "read_string",
]


class FieldError(InputError):
    """A bad value at a field path, e.g. ('grid.data_size[2]', "'900X' is not a size ...")."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def _preview() -> reprlib.Repr:
    preview = reprlib.Repr()  # keywords arrive in Python 3.12
    preview.maxlevel, preview.maxlist, preview.maxdict = 2, 4, 4
    preview.maxstring = preview.maxother = 60
    return preview


_PREVIEW = _preview()


def _show(value: Any) -> str:
    """A bounded preview of a bad value: a field may hold a whole document (or an alias
    expanding to millions of values), and the error must stay one short line."""
    return _PREVIEW.repr(value)


def read_mapping(value: Any, path: str, known: Sequence[str] | None, required: Sequence[str] = ()) -> dict:
    """A mapping whose keys are all known (else a did-you-mean) and required keys present;
    `known=None` takes any text keys (names the user chooses)."""
    if not isinstance(value, Mapping):
        wanted = f"a mapping of {', '.join(known)}" if known else "a mapping"
        raise FieldError(path, f"expected {wanted}, got {_show(value)}")
    for key in value:
        if known is None:
            if not isinstance(key, str):
                raise FieldError(f"{path}.{key}", "names must be text")
        elif key not in known:
            where = f"{path}.{key}" if path else str(key)
            guess = difflib.get_close_matches(str(key), known, n=1)
            hint = f"did you mean '{guess[0]}'?" if guess else f"known keys: {', '.join(known)}"
            raise FieldError(where, f"unknown key ({hint})")
    for key in required:
        if key not in value:
            raise FieldError(f"{path}.{key}" if path else key, "is required")
    return dict(value)


def read_list(value: Any, path: str, allow_empty: bool = False) -> list:
    if not isinstance(value, list):
        raise FieldError(path, f"expected a list, got {_show(value)} (write [a, b])")
    if not value and not allow_empty:
        raise FieldError(path, "is empty (give at least one value)")
    return value


def read_string(value: Any, path: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise FieldError(path, f"expected a non-empty string, got {_show(value)}")
    return value


def read_choice(value: Any, path: str, choices: Sequence[str]) -> str:
    if value not in choices:
        guess = difflib.get_close_matches(str(value), choices, n=1)
        hint = f"did you mean '{guess[0]}'?" if guess else f"one of {', '.join(choices)}"
        raise FieldError(path, f"{_show(value)} is not allowed ({hint})")
    return value


def read_number(
    value: Any,
    path: str,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
) -> float:
    """A finite real in [low, high] (or (low, high] when low_open)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise FieldError(path, f"expected a number, got {_show(value)}")
    too_low = low is not None and (value <= low if low_open else value < low)
    if too_low or (high is not None and value > high):
        left = "(" if low_open else "["
        raise FieldError(path, f"{value} is out of range (expected {left}{low}, {high}])")
    return float(value)


def read_int(value: Any, path: str, low: int = 0, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError(path, f"expected a whole number, got {_show(value)}")
    if value < low or (high is not None and value > high):
        raise FieldError(path, f"{value} is out of range (expected {low}..{high or 'any'})")
    return value


def read_size(value: Any, path: str) -> int:
    try:
        return parse_size(value)
    except SizeError as error:
        raise FieldError(path, str(error)) from None
