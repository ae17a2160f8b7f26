"""orch: run alignment-scaling sweeps, store every checkpoint, fit and check the laws."""

from db.version import __version__

__all__ = ["__version__"]
