"""A trial's resumable state on disk, as one typed value: `SavedCheckpoint` saves and loads itself.

A checkpoint is a directory (`model.pt`, `optim.pt`, `rng.pt`, `meta.json` with the `TrainState`,
`report.json` with the last `CheckpointReport`, `history.json` with every row the trial has
reported), written under a temporary name and renamed, so a kill never leaves half a checkpoint;
a kill between moving the old one aside and renaming the new one in leaves the old one, which
`load` reads. Resume reads `meta.json`, never the folder's name.

A checkpoint folder holds no code: tensors are saved with `torch.save` and read back with
`weights_only=True`, which refuses any pickled object (a planted `__reduce__` raises instead of
running), and the JSON files are data, checked by shape. A checkpoint is trusted only when its
report names the trial that reads it. Folders and files are the owner's alone (0700 and 0600).
"""

import json
import pickle
import shutil
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import torch

from db import CheckpointReport, Measurement
from foundation.errors import OrchError
from orchestrator.training.state import TrainState

__all__ = ["CheckpointError", "SavedCheckpoint", "set_aside"]

T = TypeVar("T")
TENSOR_FILES = ("model", "optim", "rng")


class CheckpointError(OrchError):
    """A checkpoint folder that cannot be used: truncated, malformed, another trial's, or unsafe
    to load. Retrying cannot help; the message names the folder (`folder`) and what is wrong."""

    def __init__(self, message: str, folder: Path) -> None:
        super().__init__(message)
        self.folder = folder


@dataclass(frozen=True)
class SavedCheckpoint:
    """What a trial resumes from, and every row it has reported (so that a resumed trial, or the
    same sweep run into another store, reports each row once)."""

    model: dict[str, torch.Tensor]
    optim: dict[str, Any]
    rng: torch.Tensor
    state: TrainState
    report: CheckpointReport
    history: tuple[Measurement, ...]

    def save(self, directory: Path) -> None:
        """Write the checkpoint into `directory`, replacing what is there atomically."""
        directory = Path(directory)
        directory.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        staging = directory.with_name(f".{directory.name}.{uuid.uuid4().hex[:8]}.tmp")
        staging.mkdir(mode=0o700)
        for name in TENSOR_FILES:
            torch.save(getattr(self, name), staging / f"{name}.pt")
        documents = {
            "meta": self.state.as_dict(),
            "report": self.report.as_dict(),
            "history": [asdict(row) for row in self.history],
        }
        for name, document in documents.items():
            (staging / f"{name}.json").write_text(json.dumps(document, sort_keys=True))
        for path in staging.iterdir():
            path.chmod(0o600)
        previous = directory.with_name(f".{directory.name}.{uuid.uuid4().hex[:8]}.old")
        if directory.exists():
            directory.rename(previous)
        staging.rename(directory)
        for leftover in directory.parent.glob(f".{directory.name}.*.*"):  # this one's, or a killed save's
            shutil.rmtree(leftover, ignore_errors=True)

    @classmethod
    def load(cls, directory: Path, trial_key: str) -> "SavedCheckpoint | None":
        """The checkpoint saved in `directory` for `trial_key`, or None when there is none.

        Raises CheckpointError, naming the folder and what is wrong, when a file is truncated or
        malformed, would unpickle objects other than tensors, or belongs to another trial.
        """
        directory = _complete(Path(directory))
        if directory is None:
            return None
        meta, report, history = (_json(directory, name) for name in ("meta", "report", "history"))
        state = _shaped(directory, "meta.json", TrainState.from_dict, meta)
        last = _shaped(directory, "report.json", CheckpointReport.from_dict, report)
        rows = last.rows if history is None else _shaped(directory, "history.json", _rows, history)
        if last.trial_key != trial_key:
            raise _refused(directory, f"belongs to trial {str(last.trial_key)[:10]}…, not {trial_key[:10]}…")
        model, optim, rng = (_tensors(directory, name) for name in TENSOR_FILES)
        if not isinstance(model, dict) or not isinstance(optim, dict) or not isinstance(rng, torch.Tensor):
            raise _refused(directory, "tensor files of the wrong shape (model, optim, rng)")
        return cls(model, optim, rng, state, last, rows)


def _complete(directory: Path) -> Path | None:
    """The folder to read: `directory` when whole, else the one a save killed between its two
    renames had moved aside (it is whole); None when neither holds a checkpoint."""
    if (directory / "meta.json").exists():
        return directory
    moved = sorted(directory.parent.glob(f".{directory.name}.*.old"))
    return moved[-1] if moved and (moved[-1] / "meta.json").exists() else None


def _json(directory: Path, name: str) -> Any:
    """A JSON file of the checkpoint; None for a missing history (checkpoints before it)."""
    path = directory / f"{name}.json"
    if name == "history" and not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise _refused(directory, f"no {path.name} (an incomplete checkpoint)") from None
    except (OSError, ValueError) as error:
        raise _refused(directory, f"{path.name} is truncated or not JSON ({_what(error)})") from None


def _rows(raw: Any) -> tuple[Measurement, ...]:
    if not isinstance(raw, list):
        raise TypeError(f"expected a list of rows, got {type(raw).__name__}")
    return tuple(Measurement.from_dict(row) for row in raw)


def _shaped(directory: Path, name: str, read: Callable[[Any], T], raw: Any) -> T:
    """`read(raw)`, or a CheckpointError saying the file is valid JSON of the wrong shape."""
    try:
        return read(raw)
    except (KeyError, TypeError, ValueError) as error:
        raise _refused(directory, f"{name} is JSON of the wrong shape ({_what(error)})") from None


def _tensors(directory: Path, name: str) -> Any:
    """A tensor file, read without unpickling anything but tensors and plain containers."""
    path = directory / f"{name}.pt"
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise _refused(
            directory, f"{path.name} holds objects other than tensors; loading it could run code"
        ) from None
    except (OSError, RuntimeError, EOFError, ValueError) as error:
        raise _refused(directory, f"{path.name} is truncated or corrupt ({_what(error)})") from None


def _what(error: Exception) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0][:120]}" if lines else type(error).__name__


def _refused(directory: Path, why: str) -> CheckpointError:
    return CheckpointError(f"checkpoint {directory}: {why}", directory)


def set_aside(error: CheckpointError, directory: Path) -> Path:
    """Move the unusable folder `error` names out of the way of the trial whose checkpoint
    folder is `directory`, kept for a look beside it: `<key>.unusable-N`."""
    for number in range(1, 10_000):
        aside = directory.with_name(f"{directory.name}.unusable-{number}")
        if not aside.exists():
            error.folder.rename(aside)
            return aside
    raise CheckpointError(
        f"checkpoint {directory}: 9999 unusable checkpoints beside it; clear them", directory
    )
