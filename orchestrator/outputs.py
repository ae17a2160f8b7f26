"""Where a command may write: never over one of its own inputs (a sidecar included), and never
over a file orch did not write. A file already there is replaced only when it bears orch's mark:
a JSON sidecar whose format is orch's, the data file beside such a sidecar, a sweep file
headed by `orch next --write`, or a manifest whose rows name `orch features manifest`. Checked
before any work, so a refusal leaves nothing made."""

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from orchestrator.errors import InputError

__all__ = [
    "MANIFEST_MARK",
    "NEXT_HEADER",
    "check_outputs",
    "check_writable",
    "sqlite_file",
    "written_by_orch",
]

NEXT_HEADER = "# orch next:"  # the first line of every sweep file `orch next --write` writes
MANIFEST_MARK = {"written_by": "orch features manifest"}  # in each row of a manifest it writes


def sqlite_file(url: str) -> Path | None:
    """The file an SQLite store's URL names (None: another database, or one in memory)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    if not parsed.drivername.startswith("sqlite") or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def written_by_orch(path: Path) -> bool:
    """Whether the file at `path` is one orch wrote, read from its mark (see the module's doc)."""
    if path.suffix in (".yaml", ".yml"):
        return _first_line(path).startswith(NEXT_HEADER)
    if path.suffix == ".jsonl" and _marked_manifest(path):
        return True
    return _orch_sidecar(path if path.suffix == ".json" else path.with_suffix(".json"))


def check_outputs(flag: str, targets: Sequence[Path], inputs: Iterable[Path | None]) -> None:
    """Refuse, in one line naming `flag` and its value (`targets[0]`), any target that is one of
    `inputs` or is there and is not a file orch wrote."""
    out, sources = targets[0], [source for source in inputs if source is not None]
    for target in targets:
        what = f"{target}" if target == out else f"its sidecar {target}"
        if source := next((s for s in sources if _same_file(target, s)), None):
            raise InputError(
                f"{flag} {out}: {what} is the input {source}, and orch never writes over its "
                f"inputs; give another {flag}"
            )
        if not (target.exists() or target.is_symlink()):
            continue
        if not target.is_file() or not written_by_orch(target):
            kind = "is not a file" if not target.is_file() else "orch did not write it"
            raise InputError(f"{flag} {out}: {what} is there and {kind}; move it, or give another {flag}")


def check_writable(flag: str, out: Path) -> None:
    """Refuse, before any work, an output whose folder takes no file (read-only, /proc)."""
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=out.parent, prefix=f".{out.name}."):
            pass
    except OSError as error:
        raise InputError(f"{flag} {out}: cannot write in {out.parent} ({error.strerror or error})") from None


def _same_file(one: Path, other: Path) -> bool:
    """The same file, through any link or relative path (a name not yet made: the same name)."""
    try:
        return one.resolve() == other.resolve() or (one.exists() and other.exists() and one.samefile(other))
    except OSError:  # a loop of links, a folder not readable: compared by name only
        return one.absolute() == other.absolute()


def _orch_sidecar(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 20)  # a sidecar is small; a large JSON file is not one
        found = json.loads(head)
    except (OSError, ValueError):
        return False
    return isinstance(found, dict) and str(found.get("format", "")).startswith("orch-")


def _marked_manifest(path: Path) -> bool:
    try:
        row = json.loads(_first_line(path, limit=1 << 16))
    except ValueError:
        return False
    return isinstance(row, dict) and MANIFEST_MARK.items() <= row.items()


def _first_line(path: Path, limit: int = 200) -> str:
    try:
        with path.open("rb") as handle:
            return handle.readline(limit).decode("utf-8", "replace")
    except OSError:
        return ""
