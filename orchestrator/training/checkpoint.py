"""Resumable training state on disk: a directory written under a temporary name and renamed, so a
kill never leaves half a checkpoint; a kill between moving the old one aside and renaming the new
one in leaves the old one, which resume reads. Resume reads `meta.json`, never the folder's name.

A checkpoint folder holds no code: tensors and plain values are saved with `torch.save` and read
back with `weights_only=True`, which refuses any pickled object (a planted `__reduce__` raises
instead of running), and the JSON files are data. A checkpoint is trusted only when its report
names the trial that reads it. Folders and files are the owner's alone (0700 and 0600).
"""

import json
import pickle
import shutil
import uuid
from pathlib import Path
from typing import Any

import torch

__all__ = ["CheckpointError", "load_state", "save_state"]

FILES = {"model": "model.pt", "optim": "optim.pt", "rng": "rng.pt"}
JSON_FILES = ("meta", "report", "history")  # history: every row the trial has reported


class CheckpointError(RuntimeError):
    """A checkpoint folder that cannot be trusted: unreadable, holding code, or another trial's."""


def save_state(directory: Path, state: dict[str, Any]) -> None:
    """Write {'model', 'optim', 'rng', 'meta'} (and 'report' and 'history', if given: what the
    checkpoint reported and every row the trial reported so far, so that a resumed trial can
    report them all again, to any store) into `directory`, replacing it atomically."""
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    staging = directory.with_name(f".{directory.name}.{uuid.uuid4().hex[:8]}.tmp")
    staging.mkdir(mode=0o700)
    for key, name in FILES.items():
        torch.save(state[key], staging / name)
    for key in JSON_FILES:
        if key in state:
            (staging / f"{key}.json").write_text(json.dumps(state[key], sort_keys=True))
    for path in staging.iterdir():
        path.chmod(0o600)
    previous = directory.with_name(f".{directory.name}.{uuid.uuid4().hex[:8]}.old")
    if directory.exists():
        directory.rename(previous)
    staging.rename(directory)
    for leftover in directory.parent.glob(f".{directory.name}.*.*"):  # this one's, or a killed save's
        shutil.rmtree(leftover, ignore_errors=True)


def _previous(directory: Path) -> Path | None:
    """The checkpoint a save killed between its two renames had moved aside (it is whole)."""
    moved = sorted(directory.parent.glob(f".{directory.name}.*.old"))
    return moved[-1] if moved else None


def load_state(directory: Path, trial_key: str | None = None) -> dict[str, Any] | None:
    """The state saved in `directory`, or None when there is no complete checkpoint there.

    Raises CheckpointError, naming the folder, when a file will not load as plain tensors and
    values, or when the checkpoint's report names another trial than `trial_key`.
    """
    directory = Path(directory)
    if not (directory / "meta.json").exists():
        directory = _previous(directory) or directory
        if not (directory / "meta.json").exists():
            return None
    try:
        state: dict[str, Any] = {
            key: json.loads((directory / f"{key}.json").read_text())
            for key in JSON_FILES
            if (directory / f"{key}.json").exists()
        }
        for key, name in FILES.items():
            state[key] = torch.load(directory / name, map_location="cpu", weights_only=True)
    except (OSError, ValueError, RuntimeError, EOFError, pickle.UnpicklingError) as error:
        raise CheckpointError(
            f"checkpoint {directory} holds something other than plain tensors and JSON "
            f"({type(error).__name__}); refused, since loading it could run code: delete it to "
            "start the trial over"
        ) from None
    named = state.get("report", {}).get("trial_key")
    if trial_key is not None and named != trial_key:
        raise CheckpointError(
            f"checkpoint {directory} belongs to trial {str(named)[:10]}…, not {trial_key[:10]}…; delete it"
        )
    return state
