"""Sweep progress as the store records it: what `orch status` prints, and with `--watch` each
curve's latest value."""

import json
import math
from pathlib import Path

import pandas as pd

from db import Store
from orchestrator.data.pair_order import images_seen, recorded_order

__all__ = ["ACTIVE", "counts_line", "latest_curves", "sweep_status"]

ACTIVE = ("pending", "running")  # a trial in one of these may still add rows


def sweep_status(store: Store, name: str) -> dict:
    """Per-trial state and progress of one sweep, with totals, in stable snake_case keys; trials
    in the grid's order (objective, model, data size, seed). `images`: the distinct images a
    trial's data size covers, where its pairs file records its order (`orch data pairs`)."""
    orders: dict[Path, dict | None] = {}
    trials = [
        {
            "key": row.key,
            "objective": row.objective,
            "model": row.model,
            "data_size": int(row.data_size),
            "images": _images(row.config, int(row.data_size), orders),
            "seed": int(row.seed),
            "status": row.status,
            "samples_seen": int(row.samples_seen),
            "budget_samples": int(row.budget_samples),
            "progress": min(1.0, row.samples_seen / row.budget_samples),
            "attempts": int(row.attempts),
            "reason": row.reason,
            "n_params": None if row.n_params is None else int(row.n_params),
            "host": row.host,
            "device": row.device,
            "held_out": bool(row.held_out),
        }
        for row in store.trial_states(name)
    ]
    trials.sort(key=lambda t: (t["objective"], t["model"], t["data_size"], t["seed"]))
    by_status: dict[str, int] = {}
    for trial in trials:
        by_status[trial["status"]] = by_status.get(trial["status"], 0) + 1
    seen = sum(min(t["samples_seen"], t["budget_samples"]) for t in trials)
    budget = sum(t["budget_samples"] for t in trials)
    return {
        "name": name,
        "trials": trials,
        "totals": {
            "trials": len(trials),
            "by_status": by_status,
            "samples_seen": seen,
            "budget_samples": budget,
            "progress": seen / budget if budget else 0.0,
        },
    }


def _images(config: str, size: int, orders: dict[Path, dict | None]) -> int | None:
    """The images the first `size` pairs cover; None for the world, an imported run, or a file
    without an order."""
    raw = json.loads(config)
    data = raw.get("data") if isinstance(raw, dict) else None
    pairs = data.get("pairs") if isinstance(data, dict) and data.get("source") == "files" else None
    if not isinstance(pairs, str) or any(c in pairs for c in "*?["):
        return None
    path = Path(raw.get("base_dir", ".")) / pairs
    if path not in orders:
        orders[path] = recorded_order(path)
    order = orders[path]
    return None if order is None else images_seen(order, size)


def latest_curves(frame: pd.DataFrame) -> list[dict]:
    """Each curve's (objective, model, data size, reference, eval set) newest checkpoint that
    every seed measuring it has reached: the seeds' mean and its SE (their spread over sqrt(n);
    one seed: its eval-item SE, or None). `frame`: one metric's rows (`measurements_frame`)."""
    curves = []
    by_curve = ["objective", "model", "data_size", "reference", "eval_set"]
    for (objective, model, size, reference, eval_set), rows in frame.groupby(by_curve, sort=True):
        reached = rows.groupby("trial_key").samples_seen.max().min()
        at = rows[rows.samples_seen == reached]
        values = at.value.to_numpy()
        if len(values) > 1:
            se, se_from = float(values.std(ddof=1) / math.sqrt(len(values))), "seeds"
        elif pd.isna(at.se.iloc[0]):
            se, se_from = None, None
        else:
            se, se_from = float(at.se.iloc[0]), "eval items"
        curves.append(
            {
                "objective": objective,
                "model": model,
                "data_size": int(size),
                "reference": reference,
                "eval_set": eval_set,
                "samples_seen": int(reached),
                "seeds": len(values),
                "mean": float(values.mean()),
                "se": se,
                "se_from": se_from,  # "seeds" (their spread), "eval items" (one seed's bootstrap) or None
            }
        )
    return curves


def counts_line(totals: dict) -> str:
    """`sweep_status`'s totals in one line: trials by status and the share of samples seen."""
    counts = ", ".join(f"{n} {state}" for state, n in sorted(totals["by_status"].items()))
    return f"{totals['trials']} trials ({counts}), {100 * totals['progress']:.0f}% of samples"
