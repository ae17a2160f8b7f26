"""The scoring files a sweep's finished trials were scored against, remembered per sweep. A
trial's key holds the files' paths, not their bytes, so a reference's features or the eval texts
changed in place under finished trials would pass unseen: the next `orch sweep` names each such
file and reruns nothing. To score against the new bytes, the sweep names the file under a new
path: its trials then run under new keys, beside the old ones."""

import hashlib
import json
from pathlib import Path

from db import Store
from orchestrator.data.built import sha256_of
from orchestrator.sweepfile import Spec

__all__ = ["changed_inputs", "scoring_files"]


def scoring_files(spec: Spec) -> dict[str, Path]:
    """The sweep file's field -> the file every trial is scored with (none for the world)."""
    data = spec.data
    if data.source != "files" or data.eval_texts is None:
        return {}
    files = {"data.eval.texts": data.resolve(data.eval_texts)}
    return files | {f"data.eval.features.{name}": data.resolve(path) for name, path in data.eval_features}


def changed_inputs(store: Store, spec: Spec, finished: int) -> list[str]:
    """One line per scoring file whose bytes differ from those its `finished` trials were scored
    against. The sha256s are remembered while no trial has finished, and kept once one has."""
    files = scoring_files(spec)
    if not files:
        return []
    now = {field: sha256_of(path) for field, path in files.items()}
    key = "inputs:" + hashlib.sha256(spec.name.encode()).hexdigest()[:48]
    scored = json.loads(store.remember(key, json.dumps(now, sort_keys=True), replace=not finished))
    return [
        f"{field}: {files[field]} changed (sha256 {scored[field][:12]} -> {digest[:12]}) since "
        f"{finished} finished trial(s) of sweep {spec.name} were scored against it; they are not rerun "
        "and keep their results; to score against the new file, name it under a new path (its "
        "trials run under new keys, beside these)"
        for field, digest in sorted(now.items())
        if field in scored and scored[field] != digest
    ]
