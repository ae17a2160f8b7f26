"""Sample counts written the way papers write them: 145K, 21.6M, 940M, 1.2B. Every room reads and
writes sizes, so they live in the room every other imports; MAX_SIZE is the store's limit."""

import re
from decimal import Decimal, InvalidOperation

from foundation.errors import InputError

__all__ = ["MAX_SIZE", "SizeError", "format_size", "parse_size"]

_SUFFIX = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}
_PATTERN = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMBGT]?)\s*$", re.IGNORECASE)
SIZE_HINT = "write 145K, 21.6M or 940M"
MAX_SIZE = 10**13  # samples: far past any run, and inside the store's 64-bit integers


class SizeError(InputError, ValueError):
    """A value that is not a positive whole number of samples."""


def parse_size(value: object) -> int:
    """Return the whole number of samples a literal names; reject anything else."""
    if isinstance(value, bool):
        raise SizeError(f"{value!r} is not a size ({SIZE_HINT})")
    if isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, float):
        number = Decimal(repr(value))
    elif isinstance(value, str) and (match := _PATTERN.match(value)):
        try:
            number = Decimal(match.group(1)) * _SUFFIX[match.group(2).upper()]
        except InvalidOperation as error:
            raise SizeError(f"{value!r} is not a size ({SIZE_HINT})") from error
    else:
        raise SizeError(f"{value!r} is not a size ({SIZE_HINT})")
    if number != number.to_integral_value():
        raise SizeError(f"{value!r} is not a whole number of samples ({SIZE_HINT})")
    if number <= 0:
        raise SizeError(f"{value!r} is not a positive number of samples ({SIZE_HINT})")
    if number > MAX_SIZE:
        raise SizeError(f"{value!r} is more than 10T samples, the most a store holds")
    return int(number)


def format_size(samples: int | float) -> str:
    """Write a sample count with at most three significant digits and a suffix."""
    for suffix, scale in (("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if samples >= scale:
            text = f"{samples / scale:.3g}"
            if "e" not in text:
                return f"{text}{suffix}"
    return f"{samples:.3g}" if isinstance(samples, float) else str(samples)
