"""Sweep progress as the store records it: what `orch status` prints."""

from db import Store

__all__ = ["sweep_status"]


def sweep_status(store: Store, name: str) -> dict:
    """Per-trial state and progress of one sweep, with totals, in stable snake_case keys; trials
    in the grid's order (objective, model, data size, seed)."""
    trials = [
        {
            "key": row.key,
            "objective": row.objective,
            "model": row.model,
            "data_size": int(row.data_size),
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
