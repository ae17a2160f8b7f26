"""The store's errors, under orch's root error (`foundation.errors`): a store URL that is bad
input, a server that does not answer, a row that is not there."""

from foundation.errors import InputError, OrchError

__all__ = ["NotFound", "StoreError", "StoreURLError", "StoreUnreachable"]


class StoreError(OrchError):
    """A store that cannot be opened, read or written; the message never holds a password."""


class StoreURLError(StoreError, InputError):
    """A store URL that is malformed or names an unsupported database (bad input)."""


class StoreUnreachable(StoreError):
    """The store's server did not answer or dropped the connection: worth waiting out."""


class NotFound(StoreError):
    """A row the caller asked for by key is not in the store."""
