"""The root of every error orch raises. The CLI turns an `InputError` into one line and exit 2,
any other `OrchError` into one line and exit 1. Every room may import it, so that the store, the
trainer and the fits share one hierarchy."""

import difflib

__all__ = ["InputError", "OrchError", "did_you_mean"]


class OrchError(Exception):
    """A failure that is not the user's input (exit 1)."""


class InputError(OrchError):
    """Bad input from the user: a file, a field or an option (exit 2)."""


def did_you_mean(word: str, choices: list[str]) -> str:
    """' (did you mean X?)' for the closest choice, else '': the hint a one-line error ends on."""
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]}?)" if close else ""
