"""The record an imported sweep keeps in place of a sweep file (`orch import`): where its rows
came from, and the design its fits read. Written by `orchestrator.imports`, read back here."""

import hashlib
import json
from pathlib import Path
from typing import Any

__all__ = ["imported_design", "imported_record", "keeping_claims"]


def imported_record(path: Path, sweep: str, rows: int, points: str, holdout_above: int | None) -> dict:
    """What the store keeps as the imported sweep's file."""
    imported = {"file": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "rows": rows}
    return {"name": sweep, "imported": imported | {"points": points, "holdout_above": holdout_above}}


def imported_design(raw: Any) -> tuple[str, int | None] | None:
    """(points, holdout above) of an imported sweep's record; None for a sweep file."""
    if not isinstance(raw, dict) or "imported" not in raw:
        return None
    imported = raw["imported"]
    return imported["points"], imported.get("holdout_above")


def keeping_claims(record_text: str, recorded_text: str) -> str:
    """The new record (JSON), naming the claims file the sweep's recorded one names where it
    names none: runs added to an imported sweep are checked against the claims it had."""
    record, recorded = json.loads(record_text), json.loads(recorded_text)
    if "claims" in record or "claims" not in recorded:
        return record_text
    return json.dumps(record | {"claims": recorded["claims"]})
