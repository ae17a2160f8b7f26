"""orch's version, as the installed distribution says: shown by `orch --version` and recorded
in every fit run's provenance."""

from importlib.metadata import PackageNotFoundError, version

__all__ = ["__version__"]

try:
    __version__ = version("orch")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
