"""The record an imported sweep keeps in place of a sweep file (`orch import`): where its rows
came from, and the design its fits read. Written by `orchestrator.imports`, read back here."""

import hashlib
from pathlib import Path
from typing import Any

__all__ = ["imported_design", "imported_record"]


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
