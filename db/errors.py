"""The root of every error orch raises, and the store's own. The CLI turns an `InputError` into
one line and exit 2, any other `OrchError` into one line and exit 1. They live in `db`, the room
every other room may import, so that fits, training and the store share one hierarchy."""

import difflib

__all__ = [
    "InputError",
    "NotFound",
    "OrchError",
    "StoreError",
    "StoreURLError",
    "StoreUnreachable",
    "did_you_mean",
]


class OrchError(Exception):
    """A failure that is not the user's input (exit 1)."""


class InputError(OrchError):
    """Bad input from the user: a file, a field or an option (exit 2)."""


class StoreError(OrchError):
    """A store that cannot be opened, read or written; the message never holds a password."""


class StoreURLError(StoreError, InputError):
    """A store URL that is malformed or names an unsupported database (bad input)."""


class StoreUnreachable(StoreError):
    """The store's server did not answer or dropped the connection: worth waiting out."""


class NotFound(StoreError):
    """A row the caller asked for by key is not in the store."""


def did_you_mean(word: str, choices: list[str]) -> str:
    """' (did you mean X?)' for the closest choice, else '': the hint a one-line error ends on."""
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]}?)" if close else ""
