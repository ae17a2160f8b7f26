"""Rows as the store takes them, for tests that fill a store directly."""

from db import Measurement, TrialRow


def trial_row(key: str, **fields) -> TrialRow:
    row = {
        "key": key,
        "config": "{}",
        "objective": "ntp",
        "model": "tiny",
        "data_size": 4000,
        "seed": 0,
        "budget_samples": 4000,
    }
    return TrialRow(**(row | fields))


def measurement(key: str, samples_seen: int, **fields) -> Measurement:
    row = {
        "trial_key": key,
        "samples_seen": samples_seen,
        "metric": "mutual_knn@10",
        "reference": "factor_mlp",
        "eval_set": "world-1024",
        "value": 0.1,
        "step": samples_seen // 32,
        "flops": 1e9,
        "wall_s": 1.0,
        "se": None,
        "null_mean": None,
        "null_p95": None,
        "chance": None,
    }
    return Measurement(**(row | fields))


def import_row(objective: str, model: str, size: str, seed: int, value: float) -> list:
    """One row of an `orch import` file (`orchestrator.imports.COLUMNS`): a run's final value of
    mutual 10-NN against DINOv2 ViT-B on WIT-1024, as the preprint scores it."""
    return [objective, model, size, seed, size, "mutual_knn@10", "dinov2_vitb", "wit-1024", value]
