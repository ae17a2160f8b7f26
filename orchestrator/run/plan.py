"""What a sweep will run, before it runs: trial rows for the store and the dry-run's estimates.

GPU-hours come from the plan's training FLOPs at an assumed throughput per GPU (`Throughput`:
by default 40% of 989 TFLOP/s, an H100's or H200's dense bf16 peak), with data-parallel workers
assumed to scale perfectly (a trial on 8 GPUs takes an eighth of the wall time and the same
GPU-hours). Evaluation is not counted.

A sweep starts its trials longest first (`run.packing.make_packs` orders them), so that it does
not end with one long trial running alone while the other slots idle: each trial's FLOPs over its
objective's measured training rate in the store (FLOP/s, evaluation included), spread over its
workers (`estimated_seconds`, which also decides which trials are short enough to pack).
"""

import heapq
import statistics
from dataclasses import asdict, dataclass

from db import WIDTHS, TrialRow
from orchestrator.data.shape import TextShape
from orchestrator.data.sources import source_of
from orchestrator.errors import InputError
from orchestrator.sweepfile import CORE_AXES, Resources, Spec, TrainConfig, TrialConfig
from orchestrator.sweepfile.catalog import PRESETS, estimate_params, objective_of, train_flops

__all__ = [
    "ASSUMED_CPU_FLOPS",
    "Throughput",
    "check_widths",
    "estimated_seconds",
    "makespan",
    "plan",
    "sample_flops",
    "totals",
    "trial_rows",
]

# A trial's FLOP/s per CPU, evaluation included, before the store has measured any: about what
# the embedded world's `tiny` model trains at on one core of a 2-core laptop.
ASSUMED_CPU_FLOPS = 1.0e10


@dataclass(frozen=True)
class Throughput:
    """What one GPU trains at: its dense bf16 peak and the fraction of it a step reaches (MFU)."""

    peak_tflops: float = 989.0
    mfu: float = 0.40

    def gpu_hours(self, flops: float) -> float:
        return flops / (self.peak_tflops * 1e12 * self.mfu) / 3600


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


def plan(spec: Spec, statuses: dict[str, str], throughput: Throughput = Throughput()) -> list[dict]:
    """One dict per trial: axes, estimated parameters and FLOPs, its workers, its GPU-hours and
    hours of wall time (None for a CPU trial), and its state in the store."""
    shape = source_of(spec.data).shape(spec.data)
    base = asdict(spec.trials[0].train)
    overrides: dict[TrainConfig, dict] = {}  # trials share a handful of recipes
    rows = []
    for trial in spec.trials:
        if trial.train not in overrides:
            overrides[trial.train] = _recipe_overrides(trial.train, base)
        preset = PRESETS[trial.model]
        flops = _training_flops(trial, shape)
        resources = spec.resources_for(trial.model)
        gpus = resources.workers * resources.gpu
        gpu_hours = throughput.gpu_hours(flops) if gpus > 0 else None
        rows.append(
            {
                **{axis: getattr(trial, axis) for axis in CORE_AXES},
                "recipe": overrides[trial.train],
                "n_params_est": estimate_params(preset, shape.vocab_size, shape.max_len, trial.objective),
                "samples": trial.budget_samples,
                "flops_est": flops,
                "workers": resources.workers,
                "gpus": gpus,
                "gpu_hours_est": gpu_hours,
                "wall_hours_est": None if gpu_hours is None else gpu_hours / gpus,
                "held_out": spec.is_held_out(trial),
                "key": trial.key,
                "state": statuses.get(trial.key, "new"),
            }
        )
    return rows


def sample_flops(spec: Spec, objective: str, model: str) -> float | None:
    """The dry run's training FLOPs for one sample of (objective, model) on the spec's data, at
    the batch size of the spec's first trial of that pair (None: orch has no such model shape)."""
    if model not in PRESETS:
        return None
    recipe = next((t.train for t in spec.trials if (t.objective, t.model) == (objective, model)), None)
    batch_size = (recipe or spec.trials[0].train).batch_size
    return _per_sample(objective, model, batch_size, source_of(spec.data).shape(spec.data))


def _training_flops(trial: TrialConfig, shape: TextShape) -> float:
    return trial.budget_samples * _per_sample(trial.objective, trial.model, trial.train.batch_size, shape)


def _per_sample(objective: str, model: str, batch_size: int, shape: TextShape) -> float:
    """A sample's FLOPs: its sequences at the length a batch of them is padded to."""
    views = objective_of(objective).views
    length = shape.padded_length(objective, batch_size * views)
    return train_flops(PRESETS[model], objective, views, length, shape.vocab_size)


def estimated_seconds(spec: Spec, trials: list[TrialConfig], rates: dict[str, float]) -> dict[str, float]:
    """Each trial's estimated wall seconds, by key: its FLOPs over its objective's measured
    FLOP/s (`rates`; an objective with none gets the median of the others), over its workers.
    With no rate at all, an assumed one: `ASSUMED_CPU_FLOPS` per CPU, or a GPU at `Throughput`."""
    shape = source_of(spec.data).shape(spec.data)
    fallback = statistics.median(rates.values()) if rates else None
    seconds = {}
    for trial in trials:
        resources = spec.resources_for(trial.model)
        rate = rates.get(trial.objective, fallback) or _assumed_rate(resources)
        seconds[trial.key] = _training_flops(trial, shape) / rate / resources.workers
    return seconds


def _assumed_rate(resources: Resources) -> float:
    if resources.gpu > 0:
        throughput = Throughput()
        return throughput.peak_tflops * 1e12 * throughput.mfu * resources.gpu
    return ASSUMED_CPU_FLOPS * resources.cpu


def totals(rows: list[dict], cluster_gpus: int | None = None) -> dict:
    """The plan's sums; with `cluster_gpus`, its makespan on that many GPUs (`makespan`)."""
    by_state: dict[str, int] = {}
    for row in rows:
        by_state[row["state"]] = by_state.get(row["state"], 0) + 1
    on_gpus = [row for row in rows if row["gpu_hours_est"] is not None]
    summary = {
        "trials": len(rows),
        "samples": sum(row["samples"] for row in rows),
        "flops_est": sum(row["flops_est"] for row in rows),
        "gpu_hours_est": sum(row["gpu_hours_est"] for row in on_gpus) if on_gpus else None,
        "by_state": by_state,
    }
    if cluster_gpus is not None and on_gpus:
        jobs = [(row["wall_hours_est"], row["gpus"]) for row in on_gpus]
        summary["cluster_gpus"] = cluster_gpus
        summary["makespan_hours_est"] = makespan(jobs, cluster_gpus)
        summary["makespan_floor_hours"] = max(
            max(hours for hours, _ in jobs), sum(hours * gpus for hours, gpus in jobs) / cluster_gpus
        )
    return summary


def makespan(jobs: list[tuple[float, float]], gpus: int) -> float:
    """Hours until the last of `jobs` (hours, GPUs held) ends on `gpus` GPUs, each started as
    soon as enough GPUs are free, in order of length, longest first. A job asking for more GPUs
    than the cluster has never starts: infinity."""
    if any(need > gpus for _, need in jobs):
        return float("inf")
    free, now, running = float(gpus), 0.0, []  # running: a heap of (end, GPUs)
    for hours, need in sorted(jobs, key=lambda job: -job[0]):
        while free < need:
            now, released = heapq.heappop(running)
            free += released
        heapq.heappush(running, (now + hours, need))
        free -= need
    return max((end for end, _ in running), default=0.0)
