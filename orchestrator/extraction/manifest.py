"""The rows to extract: a JSONL manifest of `{id, text | captions, image}` or a folder of images
(or .txt files), in a fixed order that both sides of a pairing share. A row without an id is
known by its place (0, 1, ...), so a sweep's eval texts file is a manifest as it stands. Every
problem is one `InputError` naming the file, the line and the field."""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from orchestrator.errors import InputError

__all__ = ["IMAGE_SUFFIXES", "Item", "Side", "read_items"]

Side = Literal["text", "image"]
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp")


@dataclass(frozen=True)
class Item:
    """One row: its id, and its text or image file (the side's input)."""

    id: str
    text: str | None = None
    image: Path | None = None

    def digest(self) -> str:
        """sha256 of the row's input (the text's UTF-8, or the image file's bytes)."""
        data = self.text.encode() if self.text is not None else self.image.read_bytes()
        return hashlib.sha256(data).hexdigest()


def read_items(data: Path, side: Side) -> list[Item]:
    """The rows of `data` for `side`: a manifest's lines in order, or a folder's files by name."""
    if data.is_dir():
        return _folder_items(data, side)
    if not data.is_file():
        raise InputError(f"--data {data}: no such file or folder (give a JSONL manifest or a folder)")
    return _manifest_items(data, side)


def _folder_items(folder: Path, side: Side) -> list[Item]:
    suffixes = IMAGE_SUFFIXES if side == "image" else (".txt",)
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in suffixes)
    if not files:
        raise InputError(f"--data {folder}: holds no {' or '.join(suffixes)} files to read {side} rows from")
    if side == "image":
        return [Item(p.stem, image=p) for p in files]
    return [Item(p.stem, text=_utf8_text(p)) for p in files]


def _utf8_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: not UTF-8 (at byte {error.start}); save it as UTF-8") from None


def _manifest_items(path: Path, side: Side) -> list[Item]:
    items, seen = [], set()
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            where = f"{path}:{number}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise InputError(
                    f"{where}: not UTF-8 (byte {raw[error.start]:#04x} at column {error.start + 1}); "
                    "save the manifest as UTF-8"
                ) from None
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(
                    f"{where}: not a JSON object ({error.msg}); write one object a line"
                ) from None
            if not isinstance(record, dict):
                raise InputError(f"{where}: not a JSON object; write one object a line")
            item = _item(record, side, path.parent, where, default_id=str(len(items)))
            if item.id in seen:
                raise InputError(f"{where}: id {item.id!r} is on an earlier line; ids must be unique")
            seen.add(item.id)
            items.append(item)
    if not items:
        raise InputError(f"--data {path}: holds no rows")
    return items


def _item(record: dict, side: Side, folder: Path, where: str, default_id: str) -> Item:
    row_id = str(record.get("id", default_id))  # a row without one is known by its place
    if side == "image":
        if not isinstance(record.get("image"), str):
            raise InputError(f"{where}: missing field 'image' (a path to the image, relative to {folder})")
        image = folder / record["image"]
        if not image.is_file():
            raise InputError(f"{where}: image {record['image']!r}: no such file in {folder}")
        return Item(row_id, image=image)
    text = record.get("text")
    captions = record.get("captions")
    if text is None and isinstance(captions, list) and captions and isinstance(captions[0], str):
        text = captions[0]  # the first caption, as platonic-rep reads WIT
    if not isinstance(text, str):
        raise InputError(f"{where}: missing field 'text' (or 'captions', a list of strings)")
    return Item(row_id, text=text)
