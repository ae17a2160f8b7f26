"""Sweep files: YAML -> a validated, frozen `Spec` with one `TrialConfig` per grid cell.

The grid is the cartesian product of its axes (the core four plus any recipe field by its dotted
path), plus `include` cells, less `exclude` filters. Every problem is a one-line `SpecError`
naming the file, the field path and the fix.
"""

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from fits.claims.claim import Claim
from foundation.errors import did_you_mean
from orchestrator.errors import SpecError
from orchestrator.sweepfile.catalog import OBJECTIVES, PRESETS, objective_of
from orchestrator.sweepfile.claims import claims_of
from orchestrator.sweepfile.config import (
    CORE_AXES,
    DEFAULT_STORE,
    DataConfig,
    EvalConfig,
    Resources,
    Spec,
    TrainConfig,
    TrialConfig,
    held_out,
)
from orchestrator.sweepfile.fields import (
    FieldError,
    read_choice,
    read_int,
    read_list,
    read_mapping,
    read_size,
    read_string,
)
from orchestrator.sweepfile.sections import (
    HoldoutRule,
    base_recipe,
    parse_data,
    parse_eval,
    parse_holdout,
    parse_resources,
    parse_train,
    recipe,
    train_paths,
    with_override,
)
from orchestrator.sweepfile.sources import rules_of
from orchestrator.sweepfile.yamlfile import read_yaml

__all__ = ["MAX_TRIALS", "load_spec", "parse_spec"]

MAX_TRIALS = 100_000  # a grid larger than this is refused unless the file raises `max_trials`


def load_spec(path: str | Path) -> Spec:
    """Read and validate a sweep file; every problem is a one-line `SpecError` naming the file."""
    path = Path(path)
    text, raw = read_yaml(path)
    # Absolute on the driver: a worker resolves a relative path against Ray's working directory.
    return parse_spec(raw, source=str(path), text=text, base_dir=path.resolve().parent)


def parse_spec(
    raw: Any, source: str, text: str = "", base_dir: Path = Path("."), read_claims: bool = True
) -> Spec:
    """`read_claims`: read and check the claims the file names (a recorded sweep file is read
    again without them: its claims file may have moved since)."""
    try:
        spec = _parse(raw, source, text, base_dir)
    except FieldError as error:
        raise SpecError(f"{source}: {error.path}: {error.message}") from None
    if read_claims and "claims" in raw:
        claims, origin = claims_of(raw["claims"], source, base_dir)
        _check_claims(claims, spec, origin)
        spec = replace(spec, claims=claims, claims_source=origin)
    return spec


def _check_claims(claims: tuple[Claim, ...], spec: Spec, origin: str) -> None:
    """Each claim names objectives, a model and a metric this sweep runs: a claim the sweep
    can never judge is a mistake in the file, found before anything runs."""
    grid = {
        "objective": sorted({t.objective for t in spec.trials}),
        "model": sorted({t.model for t in spec.trials}),
        "metric": list(spec.eval.metrics),
    }
    for claim in claims:
        named = [("objective", name) for name in claim.objectives]
        named += [(axis, getattr(claim, axis)) for axis in ("model", "metric") if getattr(claim, axis)]
        for axis, value in named:
            if value not in grid[axis]:
                raise SpecError(
                    f"{origin}: claim {claim.id!r}: {value!r} is not a{'n' if axis[0] == 'o' else ''} "
                    f"{axis} of sweep {spec.name}{did_you_mean(value, grid[axis])} "
                    f"({', '.join(grid[axis])})"
                )


def _parse(raw: Any, source: str, text: str, base_dir: Path) -> Spec:
    if raw is None:
        raise FieldError("(top)", "the file is empty (start from sweeps/goodview_vs_ntp.yaml)")
    known = (
        "name", "store", "data", "eval", "grid", "include", "exclude",
        "train", "resources", "holdout", "max_trials", "claims",
    )  # fmt: skip
    top = read_mapping(raw, "", known, required=("name", "grid"))
    name = read_string(top["name"], "name")
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", name):
        raise FieldError(
            "name", f"{name!r} may hold only letters, digits, '_', '.' and '-', and not start with '.' or '-'"
        )
    store = read_string(top.get("store", DEFAULT_STORE), "store")
    data = parse_data(top.get("data", {"source": "world"}), str(base_dir))
    evaluation = parse_eval(top.get("eval", {}), data)
    raw_train = base_recipe(top.get("train", {}))
    axes = _parse_grid(top["grid"], raw_train)
    _check_size(axes, read_int(top.get("max_trials", MAX_TRIALS), "max_trials", low=1, high=10**9))
    cells = list(_expand(axes))
    cells += _parse_include(top.get("include", []), raw_train)
    excludes = _parse_exclude(top.get("exclude", []), axes)
    trials: dict[str, TrialConfig] = {}
    recipes: dict[str, TrainConfig] = {}  # one recipe per distinct set of overrides, not per trial
    for cell in cells:
        if any(_matches(cell, rule) for rule in excludes):
            continue
        trial = _trial(cell, raw_train, data, evaluation, recipes)
        trials.setdefault(trial.key, trial)
    if not trials:
        raise FieldError("exclude", "removes every trial of the grid (loosen the filters)")
    resources, per_model = parse_resources(top.get("resources", {}))
    _check_worker_batches(trials.values(), resources, dict(per_model))
    _check_batches(trials.values())
    holdout, holdout_above = parse_holdout(top.get("holdout", {}))
    _check_holdout(holdout, trials.values())
    rules_of(data).check_objectives(data, {objective_of(t.objective) for t in trials.values()})
    return Spec(
        name=name,
        store=store,
        data=data,
        eval=evaluation,
        trials=tuple(trials.values()),
        resources=resources,
        model_resources=per_model,
        holdout=holdout,
        holdout_above=holdout_above,
        source=source,
        text=text,
    )


def _check_holdout(holdout: tuple[HoldoutRule, ...], trials: Iterable[TrialConfig]) -> None:
    """A held-out value names something the sweep runs (a typo would hold out nothing)."""
    trials = list(trials)
    for number, rule in enumerate(holdout):
        path = "holdout" if len(holdout) == 1 else f"holdout[{number}]"
        for axis, values in rule:
            present = {getattr(t, axis) for t in trials}
            for index, value in enumerate(values):
                if value not in present:
                    raise FieldError(
                        f"{path}.{axis}[{index}]", f"{value!r} is not among the sweep's trials' {axis}s"
                    )
    curves: dict[tuple[str, str], list[bool]] = {}
    for trial in trials:
        curves.setdefault((trial.objective, trial.model), []).append(held_out(holdout, trial))
    if bare := next((curve for curve, held in curves.items() if all(held)), None):
        raise FieldError(
            "holdout",
            f"holds out every run of {bare[0]} on {bare[1]}: its law has no point to fit; hold out fewer",
        )


def _check_batches(trials: Iterable[TrialConfig]) -> None:
    """A batch takes distinct samples: a data size below the batch size would put one sample in
    its own batch twice, a positive pair among its own negatives."""
    small = min(trials, key=lambda t: t.data_size - t.train.batch_size, default=None)
    if small is not None and small.data_size < small.train.batch_size:
        raise FieldError(
            "train.batch_size",
            f"{small.train.batch_size} is above the data size {small.data_size:,} of trial "
            f"{small.objective}/{small.model}/seed {small.seed}: a batch would hold a sample twice; "
            "lower the batch size or raise the data size",
        )


def _check_worker_batches(
    trials: Iterable[TrialConfig], resources: Resources, per_model: dict[str, Resources]
) -> None:
    """Every global batch of a data-parallel trial holds a row for each worker (the last batch,
    the budget's remainder, is the smallest)."""
    for trial in trials:
        workers = per_model.get(trial.model, resources).workers
        smallest = trial.budget_samples % trial.train.batch_size or trial.train.batch_size
        if smallest < workers:
            path = f"resources.model.{trial.model}" if trial.model in per_model else "resources"
            raise FieldError(
                f"{path}.workers",
                f"{workers} workers cannot share the last batch of {smallest} samples of trial "
                f"{trial.objective}/{trial.model}/{trial.data_size}/seed {trial.seed} (batch_size "
                f"{trial.train.batch_size}); use at most {smallest} workers, or a data size that is "
                f"a multiple of the batch size",
            )


def _check_size(axes: dict[str, list[Any]], cap: int) -> None:
    """Refuse a grid over `cap` cells before expanding it (10^7 cells would take minutes)."""
    count = 1
    for values in axes.values():
        count *= len(values)
    if count > cap:
        shape = " x ".join(f"{axis} {len(values)}" for axis, values in axes.items())
        raise FieldError(
            "grid",
            f"{count:,} trials ({shape}) is more than max_trials {cap:,}; "
            f"set max_trials: {count} at the top of the file to run it",
        )


def _parse_axis_value(axis: str, value: Any, path: str, raw_train: dict) -> Any:
    if axis == "objective":
        return read_choice(value, path, tuple(OBJECTIVES))
    if axis == "model":
        return read_choice(value, path, tuple(PRESETS))
    if axis == "data_size":
        return read_size(value, path)
    if axis == "seed":
        return read_int(value, path, low=0, high=2**31 - 1)
    try:
        parse_train(with_override(raw_train, axis, value), "train")
    except FieldError as error:
        if error.path == axis:
            raise FieldError(path, error.message) from None
        raise
    return value


def _parse_grid(raw: Any, raw_train: dict) -> dict[str, list[Any]]:
    known = list(CORE_AXES) + train_paths(raw_train)
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
    known = list(CORE_AXES) + train_paths(raw_train)
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


def _trial(
    cell: dict, raw_train: dict, data: DataConfig, evaluation: EvalConfig, recipes: dict[str, TrainConfig]
) -> TrialConfig:
    overrides = {axis: value for axis, value in cell.items() if axis not in CORE_AXES}
    known = repr(sorted(overrides.items()))
    if known not in recipes:
        recipes[known] = recipe(raw_train, overrides, "grid")
    return TrialConfig(
        objective=cell["objective"],
        model=cell["model"],
        data_size=cell["data_size"],
        seed=cell["seed"],
        train=recipes[known],
        data=data,
        eval=evaluation,
    )
