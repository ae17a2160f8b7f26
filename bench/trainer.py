"""The trainer on the shipped recipe (sweeps/goodview_vs_ntp.yaml: batch 64, scored 4 times an
octave), side by side in one run with two bare loops of the same model, batch and data: one that
only trains, and one that also scores the same checkpoints with the same scoring functions.

Prints orch's throughput against the evaluating loop (orch's own overhead: goal >= 0.97) and
against the training-only one, evaluation's share of the trial's time (goal <= 10%), a
checkpoint's cost split into the eval forward pass and the scores, what the item SEs and
permutation nulls cost of it, and the fraction of this CPU's matmul FLOP rate that training
reaches (the model's own GEMM shapes timed in a loop are the limit).

    python bench/trainer.py                      # jepa_good, tiny, 32K samples
    python bench/trainer.py --objective ntp --samples 16K
"""

import argparse
import math
import time
from pathlib import Path

import torch
import yaml

from foundation.sizes import parse_size
from orchestrator.data.sources import open_trial_data
from orchestrator.data.tokenizer import PAD
from orchestrator.sweepfile import parse_spec
from orchestrator.sweepfile.catalog import PRESETS
from orchestrator.training.loop import (
    DEFAULT_CACHE,
    TrainingLoss,
    _train_step,
    _trim,
    build_model,
    embed_layers,
    get_lr,
    run_trial,
)
from orchestrator.training.replicas import SOLO
from orchestrator.training.scoring import scorer_for

SHIPPED = Path(__file__).resolve().parents[1] / "sweeps" / "goodview_vs_ntp.yaml"


def config_for(objective: str, samples: int):
    """The shipped sweep's recipe and evaluation for one trial of `samples` samples."""
    raw = yaml.safe_load(SHIPPED.read_text())
    raw["grid"] = {"objective": [objective], "model": ["tiny"], "data_size": [samples], "seed": [0]}
    for only_for_the_sweep in ("store", "claims", "holdout"):
        raw.pop(only_for_the_sweep, None)
    return parse_spec(raw, str(SHIPPED)).trials[0]


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


def bare_loop(config, evaluate: bool) -> tuple[float, float]:
    """Seconds to train the same samples with nothing but forward, backward and step, and (when
    `evaluate`) the eval forward pass and scores at the trainer's checkpoints; and the seconds of
    that evaluation."""
    data = open_trial_data(config, DEFAULT_CACHE)
    model = build_model(config, data, torch.device("cpu"))
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.train.lr, weight_decay=config.train.weight_decay
    )
    training_loss = TrainingLoss(model, config)
    total = math.ceil(config.budget_samples / config.train.batch_size)
    schedule = config.checkpoints
    start = time.perf_counter()
    scorer = scorer_for(data.eval_set, config.eval) if evaluate else None
    evaluating = time.perf_counter() - start
    seen = step = due = 0
    while True:
        if due < len(schedule) and seen >= schedule[due]:  # as the trainer: one a step at most
            if scorer is not None:
                started = time.perf_counter()
                scorer.score(embed_layers(model, data.eval_set.tokens, torch.device("cpu")), [])
                evaluating += time.perf_counter() - started
            if due == len(schedule) - 1:
                return time.perf_counter() - start, evaluating
            due += 1
        count = min(config.train.batch_size, config.budget_samples - seen)
        batch = _trim(torch.as_tensor(data.take(seen, count), dtype=torch.long))
        lr = get_lr(step, total, config.train.lr, config.train.warmup, config.train.schedule)
        _train_step(training_loss, SOLO, optimizer, batch, config, step, lr)
        seen, step = seen + count, step + 1


def trainer(config) -> tuple[float, int, float]:
    """Seconds, checkpoints and training FLOPs of the real trainer on the same samples."""
    open_trial_data(config, DEFAULT_CACHE)  # the same data cache warm-up the bare loop gets
    checkpoints = []
    start = time.perf_counter()
    run_trial(config, checkpoints.append, cache_dir=Path(DEFAULT_CACHE))
    return time.perf_counter() - start, len(checkpoints), checkpoints[-1].report.rows[0].flops


def checkpoint_cost(config, repeats: int = 5) -> tuple[float, float, float, int]:
    """Seconds a checkpoint takes (eval forward and every score), with and without each neighbour
    score's item SE and permutation null; the eval forward pass alone; and the eval set's size."""
    data = open_trial_data(config, DEFAULT_CACHE)
    model = build_model(config, data, torch.device("cpu"))
    costs = []
    for noise in (True, False):
        scorer = scorer_for(data.eval_set, config.eval, noise=noise)
        scorer.score(embed_layers(model, data.eval_set.tokens, torch.device("cpu")), [])  # terms it keeps
        start = time.perf_counter()
        for _ in range(repeats):
            scorer.score(embed_layers(model, data.eval_set.tokens, torch.device("cpu")), [])
        costs.append((time.perf_counter() - start) / repeats)
    start = time.perf_counter()
    for _ in range(repeats):
        embed_layers(model, data.eval_set.tokens, torch.device("cpu"))
    forward = (time.perf_counter() - start) / repeats
    return costs[0], costs[1], forward, len(data.eval_set.tokens)


def tokens_per_step(config) -> int:
    """Non-padding tokens in one training batch, averaged over the first hundred."""
    data = open_trial_data(config, DEFAULT_CACHE)
    batch = config.train.batch_size
    return int(sum((data.take(i * batch, batch) != PAD).sum() for i in range(100)) / 100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objective", default="jepa_good")
    parser.add_argument("--samples", default="32K")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = config_for(args.objective, parse_size(args.samples))
    times: dict[str, list[float]] = {"bare": [], "bare_eval": [], "evaluating": [], "trainer": []}
    for _ in range(args.rounds):  # interleaved, best of each: the machine's noise hits all alike
        times["bare"].append(bare_loop(config, evaluate=False)[0])
        seconds, evaluating = bare_loop(config, evaluate=True)
        times["bare_eval"].append(seconds)
        times["evaluating"].append(evaluating)
        seconds, checkpoints, flops = trainer(config)
        times["trainer"].append(seconds)
    best = {name: min(values) for name, values in times.items()}
    samples = config.budget_samples
    print(f"{config.objective}, {samples:,} samples, {checkpoints} checkpoints (the shipped recipe)")
    print(f"{'':<32}{'best s':>9}{'samples/s':>11}   all rounds (s)")
    for name, label in (
        ("bare", "bare loop, training only"),
        ("bare_eval", "bare loop + the same scoring"),
        ("trainer", "orch's trainer"),
    ):
        rounds = [round(t, 1) for t in times[name]]
        print(f"{label:<32}{best[name]:>9.2f}{samples / best[name]:>11.0f}   {rounds}")
    print(
        f"orch against the evaluating bare loop: {best['bare_eval'] / best['trainer']:.3f} (goal >= 0.97; "
        f"orch's own overhead); against the training-only loop: {best['bare'] / best['trainer']:.3f}"
    )
    shares = [e / t for e, t in zip(times["evaluating"], times["bare_eval"], strict=True)]
    print(
        f"evaluation's share of the trial: {min(shares):.1%} (goal <= 10%; "
        f"{best['evaluating']:.2f} s of scoring, {best['evaluating'] / checkpoints:.3f} s a checkpoint)"
    )
    with_noise, without, forward, items = checkpoint_cost(config)
    print(
        f"one checkpoint on {items} eval items: {with_noise:.3f} s, of which the eval forward pass "
        f"{forward:.3f} s and the scores {with_noise - forward:.3f} s; {without:.3f} s without item SEs "
        f"and permutation nulls: they cost {(with_noise - without) / with_noise:.0%} of it"
    )
    limit = matmul_limit(config, tokens_per_step(config))
    print(
        f"matmul limit of the model's GEMMs: {limit / 1e9:.1f} GFLOP/s; training reaches "
        f"{flops / best['trainer'] / 1e9:.2f} GFLOP/s = {flops / best['trainer'] / limit:.2f} of it "
        f"(bare loop {flops / best['bare'] / limit:.2f})"
    )


if __name__ == "__main__":
    main()
