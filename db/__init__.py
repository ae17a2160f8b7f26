"""The SQL store: schema, migrations, `Store`, its errors and the typed rows it takes and gives.
Imports nothing else of orch but the foundation."""

from db.engine import mask_text, mask_url
from db.errors import NotFound, StoreError, StoreUnreachable, StoreURLError
from db.rows import (
    BaselineRow,
    CheckpointReport,
    FitRow,
    ForecastRow,
    GapRow,
    Measurement,
    RoundRow,
    SweepRow,
    TrialInSweep,
    TrialMeasurement,
    TrialRow,
    TrialState,
    VerdictRow,
    checked,
    columns,
)
from db.schema import (
    POSITIONS_PER_SAMPLE,
    SCHEMA_VERSION,
    TOKENS_PER_SAMPLE,
    TRAIN_LOSS,
    TRAINING_ROWS,
    WIDTHS,
)
from db.status import FINISHED, TrialStatus
from db.store import Store

__all__ = [
    "FINISHED",
    "POSITIONS_PER_SAMPLE",
    "SCHEMA_VERSION",
    "TOKENS_PER_SAMPLE",
    "TRAINING_ROWS",
    "TRAIN_LOSS",
    "WIDTHS",
    "BaselineRow",
    "CheckpointReport",
    "FitRow",
    "ForecastRow",
    "GapRow",
    "Measurement",
    "NotFound",
    "RoundRow",
    "Store",
    "StoreError",
    "StoreURLError",
    "StoreUnreachable",
    "SweepRow",
    "TrialInSweep",
    "TrialMeasurement",
    "TrialRow",
    "TrialState",
    "TrialStatus",
    "VerdictRow",
    "checked",
    "columns",
    "mask_text",
    "mask_url",
]
