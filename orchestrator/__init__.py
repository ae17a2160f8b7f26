"""orch: run alignment-scaling sweeps, store every checkpoint, fit and check the laws."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("orch")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"

__all__ = ["__version__"]
