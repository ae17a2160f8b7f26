"""orch: run alignment-scaling sweeps, store every checkpoint, fit and check the laws."""

from foundation.version import __version__

__all__ = ["__version__"]
