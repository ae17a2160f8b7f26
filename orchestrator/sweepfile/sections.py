"""Readers for the sweep file's sections other than the grid: train, data, eval, resources and
holdout. Each takes the raw YAML value and returns a typed config or raises `FieldError`."""

import copy
from typing import Any

from orchestrator.sweepfile.catalog import PRESETS, parse_metric
from orchestrator.sweepfile.config import (
    PLACEMENTS,
    SCORINGS,
    DataConfig,
    EvalConfig,
    Resources,
    SigRegConfig,
    TrainConfig,
)
from orchestrator.sweepfile.fields import (
    FieldError,
    read_choice,
    read_int,
    read_list,
    read_mapping,
    read_number,
    read_size,
)
from orchestrator.sweepfile.sources import DATA_KEYS, SOURCE_RULES, rules_of

__all__ = [
    "TRAIN_DEFAULTS",
    "HoldoutRule",
    "base_recipe",
    "parse_data",
    "parse_eval",
    "parse_holdout",
    "parse_resources",
    "parse_train",
    "recipe",
    "train_paths",
    "with_override",
]

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
TRAIN_KEYS = tuple(TRAIN_DEFAULTS)


def base_recipe(raw: Any) -> dict:
    """The sweep's `train` section merged over the defaults; it must be valid on its own."""
    merged = _merge(TRAIN_DEFAULTS, read_mapping(raw, "train", TRAIN_KEYS))
    parse_train(merged, "train")
    return merged


def _merge(base: dict, override: dict) -> dict:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def parse_train(raw: dict, path: str) -> TrainConfig:
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


def train_paths(raw: dict, prefix: str = "train") -> list[str]:
    paths = []
    for key, value in raw.items():
        path = f"{prefix}.{key}"
        paths += train_paths(value, path) if isinstance(value, dict) else [path]
    return paths


def with_override(raw_train: dict, dotted: str, value: Any) -> dict:
    updated = copy.deepcopy(raw_train)
    *parents, leaf = dotted.split(".")[1:]
    node = updated
    for part in parents:
        node = node[part]
    node[leaf] = value
    return updated


def recipe(raw_train: dict, overrides: dict[str, Any], where: str) -> TrainConfig:
    for dotted, value in overrides.items():
        raw_train = with_override(raw_train, dotted, value)
    try:
        return parse_train(raw_train, "train")
    except FieldError as error:
        raise FieldError(where + error.path.removeprefix("train"), error.message) from None


def parse_data(raw: Any, base_dir: str) -> DataConfig:
    head = read_mapping(raw, "data", ("source", *DATA_KEYS), required=("source",))
    source = read_choice(head["source"], "data.source", tuple(SOURCE_RULES))
    return SOURCE_RULES[source].parse(raw, base_dir)


def parse_eval(raw: Any, data: DataConfig) -> EvalConfig:
    known = ("set", "metrics", "checkpoints", "references", "scoring")
    evaluation = read_mapping(raw, "eval", known)
    scoring = read_choice(evaluation.get("scoring", "orch"), "eval.scoring", SCORINGS)
    name, items = rules_of(data).eval_set(evaluation.get("set"))
    metrics = read_list(evaluation.get("metrics", ["mutual_knn@10"]), "eval.metrics")
    parsed_metrics = []
    for index, metric in enumerate(metrics):
        try:
            parsed_metrics.append(str(parse_metric(metric)))
        except ValueError as error:
            raise FieldError(f"eval.metrics[{index}]", str(error)) from None
        if scoring == "platonic-rep" and parse_metric(metric).metric.needs_map:
            raise FieldError(
                f"eval.metrics[{index}]",
                f"{metric} is orch's own (platonic-rep has no retrieval metric): drop it, or score "
                "with eval.scoring: orch",
            )
    per_octave, first = _parse_checkpoints(evaluation.get("checkpoints", "log2x2"))
    for index, metric in enumerate(parsed_metrics):
        k = parse_metric(metric).k
        if items is not None and k is not None and k >= items:
            raise FieldError(
                f"eval.metrics[{index}]",
                f"{metric} needs more than {k} eval items, and {name} has {items} "
                "(lower k or enlarge the set)",
            )
    references = evaluation.get("references")
    if references is not None:
        known = rules_of(data).references(data)
        references = tuple(
            read_choice(ref, f"eval.references[{index}]", known)
            for index, ref in enumerate(read_list(references, "eval.references"))
        )
    return EvalConfig(
        set=name,
        metrics=tuple(dict.fromkeys(parsed_metrics)),
        per_octave=per_octave,
        first_checkpoint=first,
        references=references,
        scoring=scoring,
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


RESOURCE_KEYS = ("cpu", "gpu", "workers", "placement")


def _read_resources(raw: Any, path: str, base: Resources) -> Resources:
    """A `resources` entry over `base`: each worker's cpu and gpu, the workers, their placement."""
    entry = read_mapping(raw, path, RESOURCE_KEYS)
    return Resources(
        cpu=read_number(entry.get("cpu", base.cpu), f"{path}.cpu", low=0, high=1024, low_open=True),
        gpu=read_number(entry.get("gpu", base.gpu), f"{path}.gpu", low=0, high=64),
        workers=read_int(entry.get("workers", base.workers), f"{path}.workers", low=1, high=4096),
        placement=read_choice(entry.get("placement", base.placement), f"{path}.placement", PLACEMENTS),
    )


def parse_resources(raw: Any) -> tuple[Resources, tuple[tuple[str, Resources], ...]]:
    entry = read_mapping(raw, "resources", (*RESOURCE_KEYS, "model"))
    per_model_raw = entry.pop("model", {})
    base = _read_resources(entry, "resources", Resources(cpu=1, gpu=0))
    per_model = read_mapping(per_model_raw, "resources.model", tuple(PRESETS))
    return base, tuple(
        (model, _read_resources(value, f"resources.model.{model}", base))
        for model, value in per_model.items()
    )


HOLDOUT_AXES = ("data_size", "model", "objective")
HoldoutRule = tuple[tuple[str, tuple[Any, ...]], ...]  # (axis, values): a trial matching every axis


def parse_holdout(raw: Any) -> tuple[tuple[HoldoutRule, ...], int | None]:
    """The held-out cells, as rules a trial is held out by when it matches every axis of one
    (a mapping is one rule, a list several: the forecast cells of some curves, not others) and,
    for one-run-per-seed designs, the samples seen above which every checkpoint is held out
    (`samples_above: 32K`: the last octave of 64K; in a mapping only)."""
    if isinstance(raw, list):
        rules = read_list(raw, "holdout")
        return tuple(_holdout_rule(rule, f"holdout[{i}]", ()) for i, rule in enumerate(rules)), None
    entry = read_mapping(raw, "holdout", (*HOLDOUT_AXES, "samples_above"))
    above = entry.pop("samples_above", None)
    above = None if above is None else read_size(above, "holdout.samples_above")
    return ((_holdout_rule(entry, "holdout", ("samples_above",)),) if entry else ()), above


def _holdout_rule(raw: Any, path: str, beside: tuple[str, ...]) -> HoldoutRule:
    entry = read_mapping(raw, path, (*HOLDOUT_AXES, *beside))
    if not entry:
        raise FieldError(path, "is empty (name at least one of data_size, model, objective)")
    rule = []
    for axis, values in entry.items():
        values = read_list(values, f"{path}.{axis}")
        if axis == "data_size":
            values = [read_size(v, f"{path}.{axis}[{i}]") for i, v in enumerate(values)]
        rule.append((axis, tuple(values)))
    return tuple(rule)
