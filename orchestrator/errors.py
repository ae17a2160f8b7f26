"""Errors the CLI turns into one line on stderr: bad input exits 2, failures exit 1."""


class OrchError(Exception):
    """A failure that is not the user's input (exit 1)."""


class InputError(OrchError):
    """Bad input from the user: a file, a field or an option (exit 2)."""


class SpecError(InputError):
    """A sweep file that does not validate; the message names the file and field path."""
