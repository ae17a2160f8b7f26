"""Errors the CLI turns into one line on stderr: bad input exits 2, failures exit 1. The root of
the hierarchy lives in `foundation.errors`, which every room may import."""

from foundation.errors import InputError, OrchError

__all__ = ["InputError", "OrchError", "SpecError"]


class SpecError(InputError):
    """A sweep file that does not validate; the message names the file and field path."""
