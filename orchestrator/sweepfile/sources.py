"""The sweep file's two kinds of data, each reading and checking its own part of the file: the
embedded world (`data.source: world`) and files a user brings (`files`). What each does for a
trial (its shape and stream) is `orchestrator.data.sources`; both are found by `data.source`."""

import re
from typing import Any, Protocol

from orchestrator.sweepfile.catalog import WORLD_REFERENCES, Objective
from orchestrator.sweepfile.config import DataConfig
from orchestrator.sweepfile.fields import (
    FieldError,
    read_choice,
    read_int,
    read_list,
    read_mapping,
    read_number,
    read_size,
    read_string,
)

__all__ = ["DATA_KEYS", "SOURCE_RULES", "SourceRules", "rules_of"]

WORLD_KEYS = ("seed", "synonyms", "nuisance", "mention")
FILE_KEYS = ("pairs", "documents", "corpus", "eval", "tokenizer", "vocab_size", "max_len")
DATA_KEYS = (*WORLD_KEYS, *FILE_KEYS)
WORLD_SET = re.compile(r"^world-([1-9][0-9]*)$")
WORLD_SET_SIZES = (8, 100_000)  # fewer items say nothing; more would not fit an n x n kernel


class SourceRules(Protocol):
    """How one kind of data reads its `data` section and constrains the rest of the file."""

    testbed: bool  # synthetic data: a verdict on it speaks of the testbed, not of the world

    def parse(self, raw: dict, base_dir: str) -> DataConfig: ...

    def eval_set(self, raw: Any) -> tuple[str, int | None]:
        """The eval set's name and, where the file name fixes it, its item count."""
        ...

    def references(self, data: DataConfig) -> tuple[str, ...]: ...

    def check_objectives(self, data: DataConfig, objectives: set[Objective]) -> None: ...


class WorldRules:
    """The embedded world: scenes, captions and fixed image-side encoders made on the spot."""

    testbed = True

    def parse(self, raw: dict, base_dir: str) -> DataConfig:
        data = read_mapping(raw, "data", ("source", *WORLD_KEYS))
        default = DataConfig(source="world")
        return DataConfig(
            source="world",
            world_seed=read_int(data.get("seed", default.world_seed), "data.seed", low=0, high=2**31 - 1),
            world_synonyms=read_int(data.get("synonyms", default.world_synonyms), "data.synonyms", 1, 16),
            world_nuisance=read_number(data.get("nuisance", default.world_nuisance), "data.nuisance", 0, 20),
            world_mention=read_number(
                data.get("mention", default.world_mention), "data.mention", 0, 1, low_open=True
            ),
            base_dir=base_dir,
        )

    def eval_set(self, raw: Any) -> tuple[str, int | None]:
        name = read_string("world-1024" if raw is None else raw, "eval.set")
        match = WORLD_SET.match(name)
        if not match:
            raise FieldError("eval.set", f"{name!r} is not a world eval set (write world-1024)")
        low, high = WORLD_SET_SIZES
        if not low <= int(match.group(1)) <= high:
            raise FieldError("eval.set", f"{name!r} has to hold {low:,} to {high:,} items (write world-1024)")
        return name, int(match.group(1))

    def references(self, data: DataConfig) -> tuple[str, ...]:
        return WORLD_REFERENCES

    def check_objectives(self, data: DataConfig, objectives: set[Objective]) -> None:
        """The world makes every kind of view."""


class FileRules:
    """Caption pairs, documents and an eval set with its reference features, from files."""

    testbed = False

    def parse(self, raw: dict, base_dir: str) -> DataConfig:
        data = read_mapping(raw, "data", ("source", *FILE_KEYS), required=("pairs", "eval"))
        evaluation = read_mapping(data["eval"], "data.eval", ("texts", "features"), ("texts", "features"))
        features = read_mapping(evaluation["features"], "data.eval.features", None)
        if not features:
            raise FieldError("data.eval.features", "is empty (name at least one reference .npy)")
        tokenizer = read_choice(data.get("tokenizer", "bytes"), "data.tokenizer", ("bytes", "bpe"))
        vocab_default = 256 if tokenizer == "bytes" else 8192
        return DataConfig(
            source="files",
            pairs=_read_shards(data["pairs"], "data.pairs"),
            documents=_read_shards(data["documents"], "data.documents") if "documents" in data else None,
            eval_texts=read_string(evaluation["texts"], "data.eval.texts"),
            eval_features=tuple(
                (str(name), read_string(path, f"data.eval.features.{name}"))
                for name, path in sorted(features.items())
            ),
            tokenizer=tokenizer,
            vocab_size=read_int(data.get("vocab_size", vocab_default), "data.vocab_size", 256, 2**20),
            max_len=read_int(data.get("max_len", 64), "data.max_len", low=4, high=4096),
            base_dir=base_dir,
            corpus=read_size(data["corpus"], "data.corpus") if "corpus" in data else None,
        )

    def eval_set(self, raw: Any) -> tuple[str, int | None]:
        if raw is None:
            raise FieldError("eval.set", "is required for file data (name it, e.g. wit-1024)")
        return read_string(raw, "eval.set"), None  # its size is the texts file's: checked on read

    def references(self, data: DataConfig) -> tuple[str, ...]:
        return tuple(name for name, _ in data.eval_features)

    def check_objectives(self, data: DataConfig, objectives: set[Objective]) -> None:
        if data.documents is None and any(objective.documents for objective in objectives):
            names = ", ".join(sorted(o.name for o in objectives if o.documents))
            raise FieldError(
                "data.documents",
                f"is required when the grid has {names} (its views are two chunks of one document)",
            )


def _read_shards(value: Any, path: str) -> str | tuple[str, ...]:
    """A path or glob, or a list of them (shards read in one seeded order: `data.shards`)."""
    if isinstance(value, list):
        return tuple(read_string(item, f"{path}[{i}]") for i, item in enumerate(read_list(value, path)))
    return read_string(value, path)


SOURCE_RULES: dict[str, SourceRules] = {"world": WorldRules(), "files": FileRules()}


def rules_of(data: DataConfig) -> SourceRules:
    return SOURCE_RULES[data.source]
