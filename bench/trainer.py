"""Trainer throughput with checkpoints and evaluation on, against a bare loop of the same model,
batch and data with no evaluation, side by side in one run. Target: ratio >= 0.95.

    python bench/trainer.py                      # jepa_good, tiny, 32K samples, checkpoints log2
    python bench/trainer.py --objective ntp --samples 16K --checkpoints log2x2
"""

import argparse
import math
import time
from pathlib import Path

import torch

from orchestrator.data.stream import open_trial_data
from orchestrator.spec import parse_spec
from orchestrator.spec.sizes import parse_size
from orchestrator.training.loop import DEFAULT_CACHE, _build, _train_step, _trim, get_lr, run_trial


def config_for(objective: str, samples: int, checkpoints: str):
    raw = {
        "name": "bench",
        "eval": {"metrics": ["mutual_knn@10", "cka", "cknna@10"], "checkpoints": checkpoints},
        "grid": {"objective": [objective], "model": ["tiny"], "data_size": [samples], "seed": [0]},
    }
    return parse_spec(raw, "bench").trials[0]


def bare_loop(config) -> float:
    """Seconds to train the same samples with nothing but forward, backward and step."""
    data = open_trial_data(config, DEFAULT_CACHE)
    model = _build(config, data, torch.device("cpu"))
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.train.lr, weight_decay=config.train.weight_decay
    )
    total = math.ceil(config.budget_samples / config.train.batch_size)
    start = time.perf_counter()
    seen = step = 0
    while seen < config.budget_samples:
        count = min(config.train.batch_size, config.budget_samples - seen)
        batch = _trim(torch.as_tensor(data.take(seen, count), dtype=torch.long))
        lr = get_lr(step, total, config.train.lr, config.train.warmup, config.train.schedule)
        _train_step(model, optimizer, batch, config, step, lr)
        seen, step = seen + count, step + 1
    return time.perf_counter() - start


def trainer(config) -> tuple[float, int]:
    open_trial_data(config, DEFAULT_CACHE)  # the same data cache warm-up the bare loop gets
    reports = []
    start = time.perf_counter()
    run_trial(config, reports.append, cache_dir=Path(DEFAULT_CACHE))
    return time.perf_counter() - start, len(reports)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objective", default="jepa_good")
    parser.add_argument("--samples", default="32K")
    parser.add_argument("--checkpoints", default="log2")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = config_for(args.objective, parse_size(args.samples), args.checkpoints)
    bare_times, full_times = [], []
    for _ in range(args.rounds):  # interleaved, best of each: the machine's noise hits both alike
        bare_times.append(bare_loop(config))
        seconds, checkpoints = trainer(config)
        full_times.append(seconds)
    bare, full = min(bare_times), min(full_times)
    samples = config.budget_samples
    print(f"{'':<28}{'best s':>9}{'samples/s':>11}   all rounds (s)")
    print(f"{'bare loop':<28}{bare:>9.2f}{samples / bare:>11.0f}   {[round(t, 1) for t in bare_times]}")
    label = f"trainer ({checkpoints} checkpoints)"
    print(f"{label:<28}{full:>9.2f}{samples / full:>11.0f}   {[round(t, 1) for t in full_times]}")
    print(f"ratio trainer/bare throughput: {bare / full:.3f} (target >= 0.95)")


if __name__ == "__main__":
    main()
