"""Where a sweep keeps its trials' checkpoints and Ray's files (`orch sweep --storage`).

A local path, or a `file://` URI for the same. Trials read and write checkpoints as files, so on a
cluster the storage must be a shared filesystem (NFS, Lustre, a bucket mounted with gcsfuse or
s3fs) mounted at the same path on every node: a trial resumes on whichever node Ray gives it.
"""

import tempfile
from pathlib import Path
from urllib.parse import unquote, urlsplit

from orchestrator.errors import InputError

__all__ = ["DEFAULT_STORAGE", "check_storage", "storage_path"]

DEFAULT_STORAGE = ".orch"


def storage_path(value: str) -> Path:
    """The folder a `--storage` value names, or an InputError saying which forms are accepted."""
    if "://" not in value:
        return Path(value).expanduser()
    parts = urlsplit(value)
    if parts.scheme == "file" and parts.netloc in ("", "localhost") and parts.path:
        return Path(unquote(parts.path))
    raise InputError(
        f"--storage {value!r}: trials write checkpoints as files, so give a local or shared-filesystem "
        "path (or file:///path); for a bucket, mount it at the same path on every node (gcsfuse, s3fs)"
    )


def check_storage(storage: Path) -> Path:
    """The storage folder, resolved, or an InputError when this user cannot make or write it.
    Nothing is made here: bad input leaves no folder behind."""
    resolved = storage.resolve()
    existing = next(p for p in (resolved, *resolved.parents) if p.exists())
    try:  # a folder made and removed: the one test that holds on every filesystem
        Path(tempfile.mkdtemp(prefix=".orch-probe-", dir=existing)).rmdir()
    except OSError as error:
        raise InputError(
            f"--storage {storage}: cannot make folders in {existing} ({error.strerror or error}); "
            "give a folder this user can write"
        ) from None
    return resolved
