"""What every room of orch may import: the root of its errors and the did-you-mean hint, sample
sizes as papers write them, and orch's version. Imports nothing else of orch."""

from foundation.errors import InputError, OrchError, did_you_mean
from foundation.sizes import MAX_SIZE, SizeError, format_size, parse_size
from foundation.version import __version__

__all__ = [
    "MAX_SIZE",
    "InputError",
    "OrchError",
    "SizeError",
    "__version__",
    "did_you_mean",
    "format_size",
    "parse_size",
]
