"""What a sweep will run, before it runs: trial rows for the store and the dry-run's estimates."""

from dataclasses import asdict

from db import WIDTHS, TrialRow
from orchestrator.data.sources import source_of
from orchestrator.errors import InputError
from orchestrator.spec import CORE_AXES, Spec, TrainConfig
from orchestrator.spec.catalog import PRESETS, estimate_params, train_flops

__all__ = ["check_widths", "plan", "totals", "trial_rows"]


def check_widths(spec: Spec) -> None:
    """Every name the file gives fits the store's columns (Postgres refuses a longer one), or an
    InputError naming the field, before anything is written."""
    names = [("name", "sweep", spec.name), ("eval.set", "eval_set", spec.eval.set)]
    names += [(f"data.eval.features.{name}", "reference", name) for name, _ in spec.data.eval_features]
    for field, kind, value in names:
        if len(value) > WIDTHS[kind]:
            raise InputError(
                f"{spec.source}: {field}: is {len(value)} characters, longer than the store's "
                f"{WIDTHS[kind]} (shorten it)"
            )


def trial_rows(spec: Spec) -> list[TrialRow]:
    """The rows `Store.record_sweep` registers for every trial of the spec."""
    return [
        TrialRow(
            key=trial.key,
            config=trial.to_json(),
            objective=trial.objective,
            model=trial.model,
            data_size=trial.data_size,
            seed=trial.seed,
            budget_samples=trial.budget_samples,
            held_out=spec.is_held_out(trial),
        )
        for trial in spec.trials
    ]


def _recipe_overrides(train: TrainConfig, base: dict) -> dict:
    """Recipe fields where this recipe differs from the sweep's first trial's (the grid's recipe axes)."""
    own = asdict(train)
    changed = {}
    for key, value in own.items():
        if isinstance(value, dict):
            changed |= {f"train.{key}.{k}": v for k, v in value.items() if base[key][k] != v}
        elif base[key] != value:
            changed[f"train.{key}"] = value
    return changed


def plan(spec: Spec, statuses: dict[str, str]) -> list[dict]:
    """One dict per trial: axes, estimated parameters and FLOPs, and its state in the store."""
    shape = source_of(spec.data).shape(spec.data)
    base = asdict(spec.trials[0].train)
    overrides: dict[TrainConfig, dict] = {}  # trials share a handful of recipes
    rows = []
    for trial in spec.trials:
        if trial.train not in overrides:
            overrides[trial.train] = _recipe_overrides(trial.train, base)
        preset = PRESETS[trial.model]
        tokens = trial.budget_samples * shape.tokens_per_sample
        rows.append(
            {
                **{axis: getattr(trial, axis) for axis in CORE_AXES},
                "recipe": overrides[trial.train],
                "n_params_est": estimate_params(preset, shape.vocab_size, shape.max_len, trial.objective),
                "samples": trial.budget_samples,
                "flops_est": train_flops(preset, trial.objective, tokens, shape.vocab_size),
                "held_out": spec.is_held_out(trial),
                "key": trial.key,
                "state": statuses.get(trial.key, "new"),
            }
        )
    return rows


def totals(rows: list[dict]) -> dict:
    by_state: dict[str, int] = {}
    for row in rows:
        by_state[row["state"]] = by_state.get(row["state"], 0) + 1
    return {
        "trials": len(rows),
        "samples": sum(row["samples"] for row in rows),
        "flops_est": sum(row["flops_est"] for row in rows),
        "by_state": by_state,
    }
