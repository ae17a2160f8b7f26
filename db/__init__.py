"""The SQL store: schema, `Store` and its errors. Imports nothing else of orch."""

from db.schema import SCHEMA_VERSION, TRIAL_STATUSES
from db.store import NotFound, Store, StoreError, StoreURLError, mask_url

__all__ = [
    "SCHEMA_VERSION",
    "TRIAL_STATUSES",
    "NotFound",
    "Store",
    "StoreError",
    "StoreURLError",
    "mask_url",
]
