"""The features file and its sidecar, written whole or not at all: `X.npz` (one float32 matrix
per layer, `layer_00` first) and `X.json`, which says how every number in it was made."""

import json
import platform
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from orchestrator.errors import InputError
from orchestrator.extraction.manifest import Item
from orchestrator.extraction.options import Extraction, Options
from orchestrator.outputs import check_outputs, check_writable

__all__ = [
    "FORMAT",
    "check_out",
    "installed_version",
    "publish",
    "read_sidecar",
    "sidecar_path",
    "write_features",
]

FORMAT = "orch-features/1"
VERSIONS = ("orch", "torch", "transformers", "numpy")


def sidecar_path(features: Path) -> Path:
    return features.with_suffix(".json")


def check_out(out: Path, items: Path) -> None:
    """Refused before any model is loaded: a name that is not .npz, a folder that is not there,
    or either of the two files where the items file is or a file orch did not write
    (`orchestrator.outputs`)."""
    if out.suffix != ".npz":
        raise InputError(f"--out {out}: must end in .npz (one matrix per layer; the sidecar goes beside it)")
    if not out.parent.is_dir():
        raise InputError(f"--out {out}: no folder {out.parent} (make it first)")
    check_outputs("--out", [out, sidecar_path(out)], [items])
    check_writable("--out", out)


def write_features(
    out: Path, found: Extraction, items: Sequence[Item], model: Path, model_sha256: str, options: Options
) -> dict[str, Any]:
    """Both files staged beside their final names and renamed into place; the sidecar returned."""
    config = json.loads((model / "config.json").read_text())
    sidecar = {
        "format": FORMAT,
        "side": options.side,
        "model": {"folder": str(model.resolve()), "sha256": model_sha256, "type": config.get("model_type")},
        "dtype": options.dtype,
        "device": found.device,
        **found.settings,
        "layers": [{"key": f"layer_{i:02d}", "what": name} for i, name in enumerate(found.names)],
        "rows": {
            "count": len(items),
            "ids": [item.id for item in items],
            "sha256": [item.digest() for item in items],
        },
        "versions": {
            **{name: installed_version(name) for name in VERSIONS},
            "python": platform.python_version(),
        },
        "seconds": round(found.seconds, 3),
    }
    staged = out.with_name(f".{out.name}.partial")
    try:
        with staged.open("wb") as handle:
            np.savez(handle, **{f"layer_{i:02d}": layer for i, layer in enumerate(found.layers)})
        publish(staged, out, sidecar)
    finally:
        staged.unlink(missing_ok=True)
    return sidecar


def publish(staged: Path, out: Path, sidecar: dict[str, Any]) -> None:
    """A staged file and its sidecar (written here) renamed into place as `out` and `out`'s
    .json: both or neither, never the data without the sidecar that explains it."""
    staged_json = out.with_name(f".{out.stem}.json.partial")
    try:
        staged_json.write_text(json.dumps(sidecar, indent=1) + "\n")
        staged.replace(out)
        try:
            staged_json.replace(sidecar_path(out))
        except OSError:
            out.unlink(missing_ok=True)
            raise
    finally:
        staged.unlink(missing_ok=True)
        staged_json.unlink(missing_ok=True)


def read_sidecar(features: Path) -> dict[str, Any] | None:
    """The sidecar beside a features file; None where there is none (features made elsewhere)."""
    path = sidecar_path(features)
    if not path.is_file():
        return None
    try:
        sidecar = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: not a JSON sidecar ({error}); remake it with orch features") from None
    if not isinstance(sidecar, dict) or sidecar.get("format") != FORMAT:
        raise InputError(
            f"{path}: not an orch features sidecar (format {FORMAT}); remake it with orch features"
        )
    if problem := _malformed(sidecar):
        raise InputError(f"{path}: {problem}; remake it with orch features")
    return sidecar


def _malformed(sidecar: dict[str, Any]) -> str | None:
    """What of the fields orch reads back is missing or of the wrong shape, else None."""
    model, rows = sidecar.get("model"), sidecar.get("rows")
    if sidecar.get("side") not in ("text", "image"):
        return "side is not 'text' or 'image'"
    if not isinstance(model, dict) or not all(isinstance(model.get(k), str) for k in ("folder", "sha256")):
        return "model does not name its folder and sha256"
    if not isinstance(rows, dict) or not isinstance(count := rows.get("count"), int) or count < 0:
        return "rows.count is not a count of rows"
    for key in ("ids", "sha256"):
        values = rows.get(key)
        if (
            not isinstance(values, list)
            or len(values) != count
            or not all(isinstance(v, str) for v in values)
        ):
            return f"rows.{key} is not a list of {count} strings (rows.count)"
    return None


def installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
