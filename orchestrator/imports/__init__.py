"""`orch import`: runs orch did not train, read from CSV or Parquet and checked row by row."""

from orchestrator.imports.cells import COLUMNS
from orchestrator.imports.runs import Clock, ImportedRuns, read_runs

__all__ = ["COLUMNS", "Clock", "ImportedRuns", "read_runs"]
