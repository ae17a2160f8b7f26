"""Trainer throughput with checkpoints and evaluation on, against a bare loop of the same model,
batch and data with no evaluation, side by side in one run. Target: ratio >= 0.95. Also the
fraction of this CPU's matmul FLOP rate that training reaches: the model's own GEMM shapes timed
in a loop are the limit; the trainer's training FLOPs per second are compared with it.

    python bench/trainer.py                      # jepa_good, tiny, 32K samples, 4 checkpoints an octave
    python bench/trainer.py --objective ntp --samples 16K --per-octave 1
"""

import argparse
import math
import time
from pathlib import Path

import torch

from db.sizes import parse_size
from orchestrator.data.sources import open_trial_data
from orchestrator.data.tokenizer import PAD
from orchestrator.spec import parse_spec
from orchestrator.spec.catalog import PRESETS
from orchestrator.training.loop import (
    DEFAULT_CACHE,
    TrainingLoss,
    _build,
    _embed_layers,
    _train_step,
    _trim,
    get_lr,
    run_trial,
)
from orchestrator.training.replicas import SOLO
from orchestrator.training.scoring import CheckpointScorer


def config_for(objective: str, samples: int, per_octave: int, first: int):
    """The shipped sweep's recipe and evaluation for one trial."""
    raw = {
        "name": "bench",
        "eval": {
            "metrics": ["mutual_knn@10", "cka", "cknna@10"],
            "checkpoints": {"per_octave": per_octave, "first": first},
        },
        "grid": {"objective": [objective], "model": ["tiny"], "data_size": [samples], "seed": [0]},
        "train": {"batch_size": 64, "lr": 2e-3, "warmup": 0.0, "schedule": "constant"},
    }
    return parse_spec(raw, "bench").trials[0]


def matmul_limit(config, tokens_per_step: int, repeats: int = 200) -> float:
    """FLOP/s of a bare loop of the model's own GEMMs at one step's token count: the limit."""
    preset = PRESETS[config.model]
    d, ff = preset.width, preset.ff
    shapes = [
        (tokens_per_step, d, 3 * d),
        (tokens_per_step, d, d),
        (tokens_per_step, d, ff),
        (tokens_per_step, ff, d),
    ]
    flops = seconds = 0.0
    for rows, k, n in shapes:
        a, b = torch.randn(rows, k), torch.randn(k, n)
        torch.matmul(a, b)  # warm-up
        start = time.perf_counter()
        for _ in range(repeats):
            torch.matmul(a, b)
        seconds += time.perf_counter() - start
        flops += 2.0 * rows * k * n * repeats
    return flops / seconds


def bare_loop(config) -> float:
    """Seconds to train the same samples with nothing but forward, backward and step."""
    data = open_trial_data(config, DEFAULT_CACHE)
    model = _build(config, data, torch.device("cpu"))
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.train.lr, weight_decay=config.train.weight_decay
    )
    training_loss = TrainingLoss(model, config)
    total = math.ceil(config.budget_samples / config.train.batch_size)
    start = time.perf_counter()
    seen = step = 0
    while seen < config.budget_samples:
        count = min(config.train.batch_size, config.budget_samples - seen)
        batch = _trim(torch.as_tensor(data.take(seen, count), dtype=torch.long))
        lr = get_lr(step, total, config.train.lr, config.train.warmup, config.train.schedule)
        _train_step(training_loss, SOLO, optimizer, batch, config, step, lr)
        seen, step = seen + count, step + 1
    return time.perf_counter() - start


def trainer(config) -> tuple[float, int, float]:
    """Seconds, checkpoints and training FLOPs of the real trainer on the same samples."""
    open_trial_data(config, DEFAULT_CACHE)  # the same data cache warm-up the bare loop gets
    checkpoints = []
    start = time.perf_counter()
    run_trial(config, checkpoints.append, cache_dir=Path(DEFAULT_CACHE))
    return time.perf_counter() - start, len(checkpoints), checkpoints[-1].report.rows[0].flops


def checkpoint_cost(config, repeats: int = 5) -> tuple[float, float]:
    """Seconds a checkpoint takes (eval forward and every score), with and without each neighbour
    score's item SE and permutation null, on the eval set of `config` (1024 items)."""
    data = open_trial_data(config, DEFAULT_CACHE)
    model = _build(config, data, torch.device("cpu"))
    costs = []
    for noise in (True, False):
        scorer = CheckpointScorer(data.eval_set, config.eval.metrics, config.eval.references, noise=noise)
        start = time.perf_counter()
        for _ in range(repeats):
            scorer.score(_embed_layers(model, data.eval_set.tokens, torch.device("cpu")), [])
        costs.append((time.perf_counter() - start) / repeats)
    return costs[0], costs[1]


def tokens_per_step(config) -> int:
    """Non-padding tokens in one training batch, averaged over the first hundred."""
    data = open_trial_data(config, DEFAULT_CACHE)
    batch = config.train.batch_size
    return int(sum((data.take(i * batch, batch) != PAD).sum() for i in range(100)) / 100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objective", default="jepa_good")
    parser.add_argument("--samples", default="32K")
    parser.add_argument("--per-octave", type=int, default=4)
    parser.add_argument("--first", default="200")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = config_for(args.objective, parse_size(args.samples), args.per_octave, parse_size(args.first))
    bare_times, full_times = [], []
    for _ in range(args.rounds):  # interleaved, best of each: the machine's noise hits both alike
        bare_times.append(bare_loop(config))
        seconds, checkpoints, flops = trainer(config)
        full_times.append(seconds)
    bare, full = min(bare_times), min(full_times)
    samples = config.budget_samples
    print(f"{'':<28}{'best s':>9}{'samples/s':>11}   all rounds (s)")
    print(f"{'bare loop':<28}{bare:>9.2f}{samples / bare:>11.0f}   {[round(t, 1) for t in bare_times]}")
    label = f"trainer ({checkpoints} checkpoints)"
    print(f"{label:<28}{full:>9.2f}{samples / full:>11.0f}   {[round(t, 1) for t in full_times]}")
    print(f"ratio trainer/bare throughput: {bare / full:.3f} (target >= 0.95)")
    with_noise, without = checkpoint_cost(config)
    print(
        f"one checkpoint on 1024 eval items: {with_noise:.3f} s with item SE and permutation nulls, "
        f"{without:.3f} s without: they cost {(with_noise - without) / with_noise:.0%} of it (goal <= 20%)"
    )
    limit = matmul_limit(config, tokens_per_step(config))
    print(
        f"matmul limit of the model's GEMMs: {limit / 1e9:.1f} GFLOP/s; training reaches "
        f"{flops / full / 1e9:.2f} GFLOP/s = {flops / full / limit:.2f} of it "
        f"(bare loop {flops / bare / limit:.2f})"
    )


if __name__ == "__main__":
    main()
