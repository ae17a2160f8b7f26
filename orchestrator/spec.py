"""Sweep files: YAML -> a validated, frozen `Spec` -> one `TrialConfig` per grid cell.

A trial's key is the sha256 of the canonical JSON of `TrialConfig.identity()`: objective, model,
data size, seed, the resolved `train` recipe, the `data` section and the `eval` section, plus
`KEY_VERSION`. The sweep's name, store, resources and holdout never enter it, so the same trial in
two sweeps is one trial and resources can change without rerunning anything.
"""

import copy
import hashlib
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from orchestrator.errors import SpecError
from orchestrator.fields import (
    FieldError,
    read_choice,
    read_int,
    read_list,
    read_mapping,
    read_number,
    read_size,
    read_string,
)
from orchestrator.metric_names import parse_metric
from orchestrator.training.presets import PRESETS

__all__ = ["KEY_VERSION", "OBJECTIVES", "Spec", "TrialConfig", "load_spec", "parse_spec"]

KEY_VERSION = 1  # bump when a code change alters what an unchanged trial config produces
OBJECTIVES = ("jepa_good", "jepa_bad", "ntp")
CORE_AXES = ("objective", "model", "data_size", "seed")
DEFAULT_STORE = "sqlite:///orch.db"
TRAIN_DEFAULTS: dict[str, Any] = {
    "batch_size": 32,
    "lr": 2.0e-3,
    "weight_decay": 0.01,
    "warmup": 0.05,
    "schedule": "cosine",
    "epochs": 1.0,
    "grad_clip": 1.0,
    "sigreg": {"weight": 0.05, "slices": 256},
}
WORLD_SET = re.compile(r"^world-([0-9]+)$")


@dataclass(frozen=True)
class SigRegConfig:
    weight: float
    slices: int


@dataclass(frozen=True)
class TrainConfig:
    """The recipe: optimiser, schedule and regulariser, all of which enter the trial key."""

    batch_size: int
    lr: float
    weight_decay: float
    warmup: float  # fraction of the trial's sample budget
    schedule: str
    epochs: float  # passes over the trial's data size: budget = epochs x data_size samples
    grad_clip: float | None
    sigreg: SigRegConfig


@dataclass(frozen=True)
class DataConfig:
    source: str  # world | files
    world_seed: int = 0
    pairs: str | None = None
    documents: str | None = None
    eval_texts: str | None = None
    eval_features: tuple[tuple[str, str], ...] = ()
    tokenizer: str = "bytes"
    vocab_size: int = 256
    max_len: int = 64
    base_dir: str = field(default=".", compare=False)  # where relative paths resolve; not in key

    def resolve(self, path: str) -> Path:
        return (Path(self.base_dir) / path).resolve()


@dataclass(frozen=True)
class EvalConfig:
    set: str
    metrics: tuple[str, ...]
    per_octave: int
    first_checkpoint: int
    references: tuple[str, ...] | None


@dataclass(frozen=True)
class Resources:
    cpu: float
    gpu: float


@dataclass(frozen=True)
class TrialConfig:
    objective: str
    model: str
    data_size: int
    seed: int
    train: TrainConfig
    data: DataConfig
    eval: EvalConfig

    def identity(self) -> dict[str, Any]:
        """Everything that changes this trial's result, and nothing else."""
        data = asdict(self.data)
        del data["base_dir"]
        return {
            "key_version": KEY_VERSION,
            "objective": self.objective,
            "model": self.model,
            "data_size": self.data_size,
            "seed": self.seed,
            "train": asdict(self.train),
            "data": data,
            "eval": asdict(self.eval),
        }

    @property
    def key(self) -> str:
        canonical = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()

    @property
    def budget_samples(self) -> int:
        return max(1, round(self.train.epochs * self.data_size))

    def to_json(self) -> str:
        return json.dumps({**self.identity(), "base_dir": self.data.base_dir}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "TrialConfig":
        raw = json.loads(text)
        train = dict(raw["train"], sigreg=SigRegConfig(**raw["train"]["sigreg"]))
        data = dict(raw["data"], base_dir=raw.get("base_dir", "."))
        data["eval_features"] = tuple(tuple(pair) for pair in data["eval_features"])
        evaluation = dict(raw["eval"], metrics=tuple(raw["eval"]["metrics"]))
        if evaluation["references"] is not None:
            evaluation["references"] = tuple(evaluation["references"])
        return cls(
            objective=raw["objective"],
            model=raw["model"],
            data_size=raw["data_size"],
            seed=raw["seed"],
            train=TrainConfig(**train),
            data=DataConfig(**data),
            eval=EvalConfig(**evaluation),
        )


@dataclass(frozen=True)
class Spec:
    name: str
    store: str
    data: DataConfig
    eval: EvalConfig
    trials: tuple[TrialConfig, ...]
    resources: Resources
    model_resources: tuple[tuple[str, Resources], ...]
    holdout: tuple[tuple[str, tuple[Any, ...]], ...]
    source: str
    text: str

    @property
    def text_hash(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    def resources_for(self, model: str) -> Resources:
        return dict(self.model_resources).get(model, self.resources)

    def is_held_out(self, trial: TrialConfig) -> bool:
        if not self.holdout:
            return False
        return all(getattr(trial, axis) in values for axis, values in self.holdout)


def load_spec(path: str | Path) -> Spec:
    """Read and validate a sweep file; every problem is a one-line `SpecError` naming the file."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise SpecError(f"{path}: cannot read ({error.__class__.__name__}: {error})") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown line"
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise SpecError(f"{path}: YAML syntax error at {where}: {problem}") from None
    return parse_spec(raw, source=str(path), text=text, base_dir=path.parent)


def parse_spec(raw: Any, source: str, text: str = "", base_dir: Path = Path(".")) -> Spec:
    try:
        return _parse(raw, source, text, base_dir)
    except FieldError as error:
        raise SpecError(f"{source}: {error.path}: {error.message}") from None


def _parse(raw: Any, source: str, text: str, base_dir: Path) -> Spec:
    if raw is None:
        raise FieldError("(top)", "the file is empty (start from sweeps/goodview_vs_ntp.yaml)")
    known = (
        "name", "store", "data", "eval", "grid", "include", "exclude",
        "train", "resources", "holdout",
    )  # fmt: skip
    top = read_mapping(raw, "", known, required=("name", "grid"))
    name = read_string(top["name"], "name")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise FieldError("name", f"{name!r} may hold only letters, digits, '_', '.' and '-'")
    store = read_string(top.get("store", DEFAULT_STORE), "store")
    data = _parse_data(top.get("data", {"source": "world"}), str(base_dir))
    evaluation = _parse_eval(top.get("eval", {}), data)
    raw_train = _merge(TRAIN_DEFAULTS, read_mapping(top.get("train", {}), "train", TRAIN_KEYS))
    _parse_train(raw_train, "train")  # the base recipe must be valid on its own
    axes = _parse_grid(top["grid"], raw_train)
    cells = list(_expand(axes))
    cells += _parse_include(top.get("include", []), raw_train)
    excludes = _parse_exclude(top.get("exclude", []), axes)
    trials: dict[str, TrialConfig] = {}
    for cell in cells:
        if any(_matches(cell, rule) for rule in excludes):
            continue
        trial = _trial(cell, raw_train, data, evaluation)
        trials.setdefault(trial.key, trial)
    if not trials:
        raise FieldError("exclude", "removes every trial of the grid (loosen the filters)")
    resources, per_model = _parse_resources(top.get("resources", {}))
    holdout = _parse_holdout(top.get("holdout", {}))
    return Spec(
        name=name,
        store=store,
        data=data,
        eval=evaluation,
        trials=tuple(trials.values()),
        resources=resources,
        model_resources=per_model,
        holdout=holdout,
        source=source,
        text=text,
    )


TRAIN_KEYS = tuple(TRAIN_DEFAULTS)


def _merge(base: dict, override: dict) -> dict:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _parse_train(raw: dict, path: str) -> TrainConfig:
    sigreg = read_mapping(raw["sigreg"], f"{path}.sigreg", ("weight", "slices"))
    clip = raw["grad_clip"]
    return TrainConfig(
        batch_size=read_int(raw["batch_size"], f"{path}.batch_size", low=2),
        lr=read_number(raw["lr"], f"{path}.lr", low=0, high=10, low_open=True),
        weight_decay=read_number(raw["weight_decay"], f"{path}.weight_decay", low=0, high=1),
        warmup=read_number(raw["warmup"], f"{path}.warmup", low=0, high=0.5),
        schedule=read_choice(raw["schedule"], f"{path}.schedule", ("cosine", "constant")),
        epochs=read_number(raw["epochs"], f"{path}.epochs", low=0, high=1000, low_open=True),
        grad_clip=None if clip is None else read_number(clip, f"{path}.grad_clip", low=0, low_open=True),
        sigreg=SigRegConfig(
            weight=read_number(sigreg["weight"], f"{path}.sigreg.weight", low=0, high=1),
            slices=read_int(sigreg["slices"], f"{path}.sigreg.slices", low=1, high=65536),
        ),
    )


def _train_paths(raw: dict, prefix: str = "train") -> list[str]:
    paths = []
    for key, value in raw.items():
        path = f"{prefix}.{key}"
        paths += _train_paths(value, path) if isinstance(value, dict) else [path]
    return paths


def _with_override(raw_train: dict, dotted: str, value: Any) -> dict:
    updated = copy.deepcopy(raw_train)
    *parents, leaf = dotted.split(".")[1:]
    node = updated
    for part in parents:
        node = node[part]
    node[leaf] = value
    return updated


def _recipe(raw_train: dict, overrides: dict[str, Any], where: str) -> TrainConfig:
    for dotted, value in overrides.items():
        raw_train = _with_override(raw_train, dotted, value)
    try:
        return _parse_train(raw_train, "train")
    except FieldError as error:
        raise FieldError(where + error.path.removeprefix("train"), error.message) from None


def _parse_axis_value(axis: str, value: Any, path: str, raw_train: dict) -> Any:
    if axis == "objective":
        return read_choice(value, path, OBJECTIVES)
    if axis == "model":
        return read_choice(value, path, tuple(PRESETS))
    if axis == "data_size":
        return read_size(value, path)
    if axis == "seed":
        return read_int(value, path, low=0, high=2**31 - 1)
    try:
        _parse_train(_with_override(raw_train, axis, value), "train")
    except FieldError as error:
        if error.path == axis:
            raise FieldError(path, error.message) from None
        raise
    return value


def _parse_grid(raw: Any, raw_train: dict) -> dict[str, list[Any]]:
    known = list(CORE_AXES) + _train_paths(raw_train)
    grid = read_mapping(raw, "grid", known, required=CORE_AXES)
    axes: dict[str, list[Any]] = {}
    for axis, values in grid.items():
        parsed = [
            _parse_axis_value(axis, value, f"grid.{axis}[{index}]", raw_train)
            for index, value in enumerate(read_list(values, f"grid.{axis}"))
        ]
        for index, value in enumerate(parsed):
            if parsed.index(value) != index:
                raise FieldError(f"grid.{axis}[{index}]", f"{value!r} is listed twice")
        axes[axis] = parsed
    return axes


def _expand(axes: dict[str, list[Any]]) -> Iterator[dict[str, Any]]:
    names = list(axes)
    for values in itertools.product(*(axes[name] for name in names)):
        yield dict(zip(names, values, strict=True))


def _parse_include(raw: Any, raw_train: dict) -> list[dict[str, Any]]:
    known = list(CORE_AXES) + _train_paths(raw_train)
    cells = []
    for index, entry in enumerate(read_list(raw, "include", allow_empty=True)):
        path = f"include[{index}]"
        entry = read_mapping(entry, path, known, required=CORE_AXES)
        cells.append(
            {
                axis: _parse_axis_value(axis, value, f"{path}.{axis}", raw_train)
                for axis, value in entry.items()
            }
        )
    return cells


def _parse_exclude(raw: Any, axes: dict[str, list[Any]]) -> list[dict[str, Any]]:
    rules = []
    for index, entry in enumerate(read_list(raw, "exclude", allow_empty=True)):
        path = f"exclude[{index}]"
        entry = read_mapping(entry, path, list(axes))
        if not entry:
            raise FieldError(path, "is empty (name at least one axis value to exclude)")
        rule = {}
        for axis, value in entry.items():
            if axis == "data_size":
                value = read_size(value, f"{path}.{axis}")
            if value not in axes[axis]:
                raise FieldError(f"{path}.{axis}", f"{value!r} is not on the grid's {axis} axis")
            rule[axis] = value
        rules.append(rule)
    return rules


def _matches(cell: dict[str, Any], rule: dict[str, Any]) -> bool:
    return all(cell.get(axis) == value for axis, value in rule.items())


def _trial(cell: dict, raw_train: dict, data: DataConfig, evaluation: EvalConfig) -> TrialConfig:
    overrides = {axis: value for axis, value in cell.items() if axis not in CORE_AXES}
    return TrialConfig(
        objective=cell["objective"],
        model=cell["model"],
        data_size=cell["data_size"],
        seed=cell["seed"],
        train=_recipe(raw_train, overrides, "grid"),
        data=data,
        eval=evaluation,
    )


def _parse_data(raw: Any, base_dir: str) -> DataConfig:
    head = read_mapping(raw, "data", ("source", *DATA_KEYS), required=("source",))
    source = read_choice(head["source"], "data.source", ("world", "files"))
    if source == "world":
        known = ("source", "seed")
        data = read_mapping(raw, "data", known)
        seed = read_int(data.get("seed", 0), "data.seed", low=0, high=2**31 - 1)
        return DataConfig(source="world", world_seed=seed, base_dir=base_dir)
    data = read_mapping(raw, "data", ("source", *DATA_KEYS), required=("pairs", "eval"))
    evaluation = read_mapping(data["eval"], "data.eval", ("texts", "features"), ("texts", "features"))
    features = read_mapping(evaluation["features"], "data.eval.features", None)
    if not features:
        raise FieldError("data.eval.features", "is empty (name at least one reference .npy)")
    tokenizer = read_choice(data.get("tokenizer", "bytes"), "data.tokenizer", ("bytes", "bpe"))
    vocab_default = 256 if tokenizer == "bytes" else 8192
    return DataConfig(
        source="files",
        pairs=read_string(data["pairs"], "data.pairs"),
        documents=read_string(data["documents"], "data.documents") if "documents" in data else None,
        eval_texts=read_string(evaluation["texts"], "data.eval.texts"),
        eval_features=tuple(
            (str(name), read_string(path, f"data.eval.features.{name}"))
            for name, path in sorted(features.items())
        ),
        tokenizer=tokenizer,
        vocab_size=read_int(data.get("vocab_size", vocab_default), "data.vocab_size", 256, 2**20),
        max_len=read_int(data.get("max_len", 64), "data.max_len", low=4, high=4096),
        base_dir=base_dir,
    )


DATA_KEYS = ("seed", "pairs", "documents", "eval", "tokenizer", "vocab_size", "max_len")


def _parse_eval(raw: Any, data: DataConfig) -> EvalConfig:
    known = ("set", "metrics", "checkpoints", "references")
    evaluation = read_mapping(raw, "eval", known)
    default_set = "world-1024" if data.source == "world" else None
    if "set" not in evaluation and default_set is None:
        raise FieldError("eval.set", "is required for file data (name it, e.g. wit-1024)")
    name = read_string(evaluation.get("set", default_set), "eval.set")
    if data.source == "world" and not WORLD_SET.match(name):
        raise FieldError("eval.set", f"{name!r} is not a world eval set (write world-1024)")
    metrics = read_list(evaluation.get("metrics", ["mutual_knn@10"]), "eval.metrics")
    parsed_metrics = []
    for index, metric in enumerate(metrics):
        try:
            parsed_metrics.append(str(parse_metric(metric)))
        except ValueError as error:
            raise FieldError(f"eval.metrics[{index}]", str(error)) from None
    per_octave, first = _parse_checkpoints(evaluation.get("checkpoints", "log2x2"))
    references = evaluation.get("references")
    if references is not None:
        references = tuple(
            read_string(ref, f"eval.references[{index}]")
            for index, ref in enumerate(read_list(references, "eval.references"))
        )
    return EvalConfig(
        set=name,
        metrics=tuple(dict.fromkeys(parsed_metrics)),
        per_octave=per_octave,
        first_checkpoint=first,
        references=references,
    )


def _parse_checkpoints(raw: Any) -> tuple[int, int]:
    """'log2' is one checkpoint per octave of samples seen, 'log2x2' two; a mapping sets both."""
    shorthand = {"log2": 1, "log2x2": 2, "log2x4": 4}
    if isinstance(raw, str):
        return shorthand[read_choice(raw, "eval.checkpoints", tuple(shorthand))], 1024
    checkpoints = read_mapping(raw, "eval.checkpoints", ("per_octave", "first"))
    return (
        read_int(checkpoints.get("per_octave", 2), "eval.checkpoints.per_octave", low=1, high=16),
        read_size(checkpoints.get("first", "1K"), "eval.checkpoints.first"),
    )


def _read_resources(raw: Any, path: str, base: Resources | None) -> Resources:
    entry = read_mapping(raw, path, ("cpu", "gpu"))
    cpu = entry.get("cpu", base.cpu if base else 1)
    gpu = entry.get("gpu", base.gpu if base else 0)
    return Resources(
        cpu=read_number(cpu, f"{path}.cpu", low=0, high=1024, low_open=True),
        gpu=read_number(gpu, f"{path}.gpu", low=0, high=64),
    )


def _parse_resources(raw: Any) -> tuple[Resources, tuple[tuple[str, Resources], ...]]:
    entry = read_mapping(raw, "resources", ("cpu", "gpu", "model"))
    per_model_raw = entry.pop("model", {})
    base = _read_resources(entry, "resources", None)
    per_model = read_mapping(per_model_raw, "resources.model", tuple(PRESETS))
    return base, tuple(
        (model, _read_resources(value, f"resources.model.{model}", base))
        for model, value in per_model.items()
    )


def _parse_holdout(raw: Any) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    entry = read_mapping(raw, "holdout", ("data_size", "model", "objective"))
    holdout = []
    for axis, values in entry.items():
        values = read_list(values, f"holdout.{axis}")
        if axis == "data_size":
            values = [read_size(v, f"holdout.{axis}[{i}]") for i, v in enumerate(values)]
        holdout.append((axis, tuple(values)))
    return tuple(holdout)
