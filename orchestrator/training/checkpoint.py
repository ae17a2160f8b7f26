"""Resumable training state on disk: a directory written under a temporary name and renamed, so a
kill never leaves half a checkpoint. Resume reads `meta.json`, never the folder's name."""

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import torch

__all__ = ["load_state", "save_state"]

FILES = {"model": "model.pt", "optim": "optim.pt", "rng": "rng.pt"}
JSON_FILES = ("meta", "report")


def save_state(directory: Path, state: dict[str, Any]) -> None:
    """Write {'model', 'optim', 'rng', 'meta'} (and 'report', if given: what the checkpoint
    reported, so a resumed trial can report it again) into `directory`, replacing it atomically."""
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = directory.with_name(f".{directory.name}.{uuid.uuid4().hex[:8]}.tmp")
    staging.mkdir()
    for key, name in FILES.items():
        torch.save(state[key], staging / name)
    for key in JSON_FILES:
        if key in state:
            (staging / f"{key}.json").write_text(json.dumps(state[key], sort_keys=True))
    previous = directory.with_name(f".{directory.name}.{uuid.uuid4().hex[:8]}.old")
    if directory.exists():
        directory.rename(previous)
    staging.rename(directory)
    shutil.rmtree(previous, ignore_errors=True)


def load_state(directory: Path) -> dict[str, Any] | None:
    """The state saved in `directory`, or None when there is no complete checkpoint there."""
    directory = Path(directory)
    if not (directory / "meta.json").exists():
        return None
    state: dict[str, Any] = {
        key: json.loads((directory / f"{key}.json").read_text())
        for key in JSON_FILES
        if (directory / f"{key}.json").exists()
    }
    for key, name in FILES.items():
        state[key] = torch.load(directory / name, map_location="cpu", weights_only=False)
    return state
