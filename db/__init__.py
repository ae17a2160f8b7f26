"""The SQL store: schema, migrations, `Store`, its errors and the typed rows it takes and gives.
Imports nothing else of orch."""

from db.engine import NotFound, StoreError, StoreUnreachable, StoreURLError, mask_text, mask_url
from db.rows import CheckpointReport, Measurement, TrialMeasurement, TrialRow, TrialState, columns
from db.schema import SCHEMA_VERSION, TRIAL_STATUSES, WIDTHS
from db.store import Store

__all__ = [
    "SCHEMA_VERSION",
    "TRIAL_STATUSES",
    "WIDTHS",
    "CheckpointReport",
    "Measurement",
    "NotFound",
    "Store",
    "StoreError",
    "StoreURLError",
    "StoreUnreachable",
    "TrialMeasurement",
    "TrialRow",
    "TrialState",
    "columns",
    "mask_text",
    "mask_url",
]
