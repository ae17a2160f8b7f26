"""What `orch data pairs` and `orch data chunks` share: the output checked before any row is read,
inputs named by their sha256, the eval-set overlap, and a Parquet file published with its sidecar
whole or not at all (`X.parquet` and `X.json`, which says how every row was made)."""

import errno
import hashlib
import os
import platform
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from orchestrator.data.matrices import DataError
from orchestrator.data.shards import read_rows
from orchestrator.extraction.output import installed_version
from orchestrator.extraction.output import publish as write_both
from orchestrator.outputs import check_outputs, check_writable

__all__ = ["Overlap", "check_out", "describe_inputs", "normalised", "publish", "staging"]

NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # a full disk, a quota, a file-size limit


def check_out(out: Path, inputs: Iterable[Path | None]) -> None:
    """Refused before a row is read: a name that is not .parquet, a folder that is not there, or
    the file or its sidecar where an input is or a file orch did not write (`orchestrator.outputs`)."""
    if out.suffix != ".parquet":
        raise DataError(f"--out {out}: must end in .parquet (the sidecar goes beside it, as .json)")
    if not out.parent.is_dir():
        raise DataError(f"--out {out}: no folder {out.parent} (make it first)")
    check_outputs("--out", [out, out.with_suffix(".json")], inputs)
    check_writable("--out", out)


@contextmanager
def staging(out: Path) -> Iterator[Path]:
    """The file `out` is written as before it is published: removed whatever happens, and a
    write that runs out of room said in one line (the input is not at fault)."""
    staged = out.with_name(f".{out.name}.partial")
    try:
        yield staged
    except OSError as error:
        if error.errno not in NO_ROOM:
            raise
        raise DataError(
            f"--out {out}: no room to write it ({os.strerror(error.errno)}); nothing was written: "
            "free some space, or give an --out elsewhere"
        ) from None
    finally:
        staged.unlink(missing_ok=True)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def describe_inputs(paths: Iterable[Path], rows: Iterable[int]) -> list[dict[str, Any]]:
    return [
        {"path": str(path.resolve()), "sha256": sha256_of(path), "rows": count}
        for path, count in zip(paths, rows, strict=True)
    ]


def normalised(text: str) -> str:
    """A text as the overlap check compares it: lower case, punctuation dropped, runs of white
    space as one space ("A cat, on a MAT." reads "a cat on a mat")."""
    return " ".join(_PUNCTUATION.sub("", text.lower()).split())


def verbatim(text: str) -> str:
    """A text as an exact copy must match it: runs of white space as one space, nothing else changed."""
    return " ".join(text.split())


_PUNCTUATION = re.compile(r"[^\w\s]")
OVERLAP_RULE = (
    "an eval text is in the training text when it equals a caption, or is a run of a chunk's words, "
    "once both are lower-cased, stripped of punctuation and their white space runs made one space; "
    "an exact copy matches with case and punctuation kept, a near copy only without them"
)


class Overlap:
    """The eval texts that occur in what a trial trains on (the captions of the pairs written, the
    chunks written; after `normalised`), each an exact or a near copy (`OVERLAP_RULE`): what a
    model may have seen of its own test set. The preprint found 43 of WIT-1024's 1,024 in its own.
    A caption is compared whole (`see`); a chunk is searched for every eval text as a run of its
    words (`see_within`), through an index of each eval text's first two words."""

    def __init__(self, eval_texts: Path) -> None:
        if not eval_texts.is_file():  # a device (/dev/zero) or a pipe would be read without end
            raise DataError(f"--eval-texts {eval_texts}: not a file (give the eval set's JSONL)")
        texts = []
        for where, row in read_rows(eval_texts):
            if not isinstance(row.get("text"), str):
                raise DataError(f"{where}: column 'text' is missing or not text (--eval-texts)")
            texts.append(row["text"])
        self.path, self.count = eval_texts, len(texts)
        self.wanted = {normalised(text): text for text in texts}
        self.exact: set[str] = set()
        self.near: set[str] = set()
        self.by_start: dict[tuple[str, ...], list[list[str]]] = {}
        for key in self.wanted:
            words = key.split()
            self.by_start.setdefault(tuple(words[:2]), []).append(words)

    def see(self, texts: Iterable[str]) -> None:
        for text in texts:
            if (key := normalised(text)) in self.wanted:
                self._found(key, verbatim(text) == verbatim(self.wanted[key]))

    def see_within(self, text: str) -> None:
        words = normalised(text).split()
        for start in range(len(words)):
            for length in (1, 2):
                for candidate in self.by_start.get(tuple(words[start : start + length]), ()):
                    if len(candidate) >= length and words[start : start + len(candidate)] == candidate:
                        key = " ".join(candidate)
                        self._found(key, verbatim(self.wanted[key]) in verbatim(text))

    def see_within_each(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.see_within(text)

    def _found(self, key: str, exact: bool) -> None:
        (self.exact if exact else self.near).add(key)

    def summary(self) -> dict[str, Any]:
        near = self.near - self.exact
        return {
            "eval_texts": str(self.path.resolve()),
            "sha256": sha256_of(self.path),
            "of": self.count,
            "count": len(self.exact | near),
            "rule": OVERLAP_RULE,
            "texts": sorted(self.wanted[key] for key in self.exact | near),
            "exact": sorted(self.wanted[key] for key in self.exact),
            "near": sorted(self.wanted[key] for key in near),
        }


def publish(staged: Path, out: Path, sidecar: dict[str, Any]) -> None:
    """The staged Parquet file and its sidecar, with the versions that made it, renamed into
    place: both or neither."""
    versions = {name: installed_version(name) for name in ("orch", "pyarrow")}
    write_both(staged, out, {**sidecar, "versions": {**versions, "python": platform.python_version()}})
