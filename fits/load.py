"""The one place `fits` reads the store: measurements as a frame, trial recipes, baselines."""

import json

import pandas as pd

from db import Store

__all__ = ["flops_per_sample", "load_measurements", "recipes"]


def load_measurements(store: Store, sweep: str, metric: str, reference: str | None) -> pd.DataFrame:
    """One metric's measurements of the sweep's done trials, with trial columns and `is_final`."""
    frame = store.measurements_frame(sweep)
    frame = frame[(frame.metric == metric) & (frame.status == "done")]
    if reference is not None:
        frame = frame[frame.reference == reference]
    frame = frame.assign(
        is_final=frame.samples_seen == frame.budget_samples, held_out=frame.held_out.astype(bool)
    )
    return frame.reset_index(drop=True)


def recipes(store: Store, sweep: str) -> dict[str, dict]:
    """Objective -> the train recipe its trials used (the first trial's, per objective)."""
    trials = store.trials_frame(sweep)
    found: dict[str, dict] = {}
    for row in trials.itertuples():
        found.setdefault(row.objective, json.loads(row.config)["train"])
    return found


def flops_per_sample(frame: pd.DataFrame) -> dict[str, float]:
    """Objective -> training FLOPs per sample, from the final checkpoints."""
    final = frame[frame.is_final & (frame.samples_seen > 0)]
    return {name: float((g.flops / g.samples_seen).median()) for name, g in final.groupby("objective")}
