"""A store filled as `orch sweep` leaves it, from known laws with seed noise, for the fit tests."""

from dataclasses import replace

import numpy as np
import yaml

from db import TRAINING_ROWS, Store, TrialStatus
from fits.curve.laws import saturating
from fits.curve.settings import SweepDesign
from orchestrator.sweepfile import parse_spec
from tests.rows import measurement, trial_row

SIZES = [145_000 * 2**i for i in range(8)]  # the last is held out
PLANTED_GAP = 42.0  # ntp needs 42x the samples jepa_good needs for the same alignment
CHANCE, NULL_P95 = 10 / 1023, 0.012  # mutual 10-NN on 1024 eval items
# What `orch fit` reads of the simulated sweep's file: one run per data size, its final checkpoint.
SIM_DESIGN = SweepDesign(points="final", holdout_above=None, ranges={"mutual_knn@10": (0.0, 1.0)})


def simulated_store(
    url: str, ntp_sizes: int | None = None, sizes=SIZES, seeds: int = 3, claims: list | None = None
) -> Store:
    """A sweep's store as `orch sweep` leaves it, from known laws with seed noise: every size
    but the last fitted, the last held out; `claims`: the sweep file states these inline. Beside
    each score, the rows a real trial writes there too (`_beside`), so the store holds every row
    kind a sweep's does (`tests/test_stores.py` holds it to a real sweep's)."""
    rng = np.random.default_rng(0)
    store = Store.open(url)
    laws = {"jepa_good": (0.2, 0.05, 0.4), "ntp": (0.2, 0.05 * PLANTED_GAP**0.4, 0.4)}
    grid = {"objective": list(laws), "model": ["base"], "data_size": list(sizes), "seed": list(range(seeds))}
    raw = {"name": "sim", "grid": grid, "train": {"lr": 1e-3}, "holdout": {"data_size": list(sizes[-1:])}}
    raw |= {"claims": claims} if claims else {}
    recipe = parse_spec(raw, "sim.yaml").trials[0]
    rows, measurements = [], []
    for objective, law in laws.items():
        for size in sizes if objective == "jepa_good" or ntp_sizes is None else sizes[-ntp_sizes - 1 : -1]:
            for seed in range(seeds):
                key = f"{objective}-{size}-{seed}".ljust(64, "0")
                config = replace(recipe, objective=objective, data_size=size, seed=seed).to_json()
                trial = {"config": config, "objective": objective, "model": "base", "data_size": size}
                trial |= {"seed": seed, "budget_samples": size, "held_out": size == sizes[-1]}
                rows.append(trial_row(key, **trial))
                for samples in (0, size):
                    noise = rng.normal(0, 0.003 if samples == 0 else 0.004)
                    value = (0.03 if samples == 0 else saturating(size, *law)) + noise
                    row = {"reference": "dino", "eval_set": "wit-1024", "value": float(value)}
                    row |= {"step": samples // 256, "flops": 6e8 * samples, "wall_s": 1.0}
                    row |= {"chance": CHANCE, "null_mean": 0.01, "null_p95": NULL_P95}
                    measurements.append(measurement(key, samples, **row))
                    measurements += _beside(key, samples, row)
    store.record_sweep("sim", yaml.safe_dump(raw), "h", "sim.yaml", rows)
    for row in rows:
        store.set_status(row.key, TrialStatus.RUNNING)
        store.set_status(row.key, TrialStatus.DONE)
    store.write_measurements(measurements)
    return store


def _beside(key: str, samples: int, score: dict) -> list:
    """What a trial writes beside a checkpoint's score: the score per layer, and after S=0 its
    training rows (loss, tokens and positions per sample: no reference, eval set "train")."""
    layers = [measurement(key, samples, **(score | {"metric": f"mutual_knn@10/layer{i}"})) for i in range(2)]
    if samples == 0:
        return layers
    training = {"reference": "", "eval_set": "train", "step": samples // 256, "flops": 6e8 * samples}
    return layers + [
        measurement(key, samples, metric=name, value=value, **training)
        for name, value in zip(TRAINING_ROWS, (2.5, 30.0, 40.0), strict=True)
    ]
