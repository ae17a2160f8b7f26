"""One trial, top to bottom: build the data and the encoder, train, and at every checkpoint score
the eval set against every reference and hand out a `SavedCheckpoint` with the rows.

`run_trial` knows nothing of Ray: the trainable passes an `on_checkpoint` that saves the
checkpoint and forwards its report to Ray Tune, a test passes a list's `append`. Samples seen
count examples (a JEPA pair is one sample). FLOPs are training FLOPs, 6 x (block + output-layer)
parameters x non-padding tokens (Kaplan et al.); evaluation is not counted.

A data-parallel trial runs `run_trial` in each of its processes, with its `Replica`: each takes
its rows of every global batch and trains the same model (see `training.replicas`); the leader
alone evaluates and hands out checkpoints, and the others call `on_follow` in step with it.
Counts and FLOPs are the global batch's on every process.
"""

import copy
import math
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from db import (
    POSITIONS_PER_SAMPLE,
    TOKENS_PER_SAMPLE,
    TRAIN_LOSS,
    TRAINING_ROWS,
    CheckpointReport,
    Measurement,
    TrialStatus,
)
from orchestrator.data.sources import open_trial_data
from orchestrator.data.stream import TrialData
from orchestrator.data.tokenizer import PAD
from orchestrator.sweepfile import TrialConfig
from orchestrator.sweepfile.catalog import PRESETS, Preset, objective_of, train_flops
from orchestrator.training.checkpoint import SavedCheckpoint
from orchestrator.training.collapse import detect_collapse, relative_spread
from orchestrator.training.encoders import TextEncoder
from orchestrator.training.objectives import jepa_loss, ntp_loss
from orchestrator.training.platonic_scoring import PlatonicRepScorer
from orchestrator.training.replicas import SOLO, Replica
from orchestrator.training.scoring import CheckpointScorer, Score, scorer_for
from orchestrator.training.state import TrainState

__all__ = ["TrialOutcome", "build_model", "embed_layers", "get_lr", "run_trial"]

DEFAULT_CACHE = Path.home() / ".cache" / "orch"
MIN_LR_FRACTION = 0.1  # cosine decays to a tenth of the peak (as nanoGPT does)
EVAL_BATCH = 256
MAX_PREFETCH_WORKERS = 4


def prefetch_workers(device: str) -> int:
    """Data processes for a file stream: on a GPU, the trial's CPUs beyond the trainer's own (up
    to 4); on CPU none, since every core trains (a thread prefetches)."""
    return min(MAX_PREFETCH_WORKERS, torch.get_num_threads() - 1) if device.startswith("cuda") else 0


@dataclass
class TrialOutcome:
    status: TrialStatus | None  # done | collapsed (None on a follower, which does not evaluate)
    reason: str | None
    samples_seen: int
    last: SavedCheckpoint | None  # the final checkpoint, with every row (None on a follower)
    checkpoints: list[int] = field(default_factory=list)


def get_lr(step: int, total_steps: int, base_lr: float, warmup: float, schedule: str) -> float:
    """Linear warm-up over `warmup` of the steps, then constant or cosine to MIN_LR_FRACTION."""
    warmup_steps = max(1, round(warmup * total_steps)) if warmup > 0 else 0
    if step < warmup_steps:
        return base_lr * (step + 1) / warmup_steps
    if schedule == "constant":
        return base_lr
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    cosine = 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))
    return base_lr * (MIN_LR_FRACTION + (1 - MIN_LR_FRACTION) * cosine)


@torch.no_grad()
def embed_layers(model: TextEncoder, tokens: np.ndarray, device: torch.device) -> list[torch.Tensor]:
    """Pooled hidden states of every layer for each text: L x (n, d), on the CPU in float32."""
    model.eval()
    order = np.argsort((tokens != PAD).sum(axis=1), kind="stable")  # similar lengths batch together
    chunks: list[list[torch.Tensor]] = []
    for start in range(0, len(tokens), EVAL_BATCH):
        rows = tokens[order[start : start + EVAL_BATCH]]
        batch = _trim(torch.as_tensor(rows, dtype=torch.long)).to(device)
        with _autocast(device):
            chunks.append([layer.float().cpu() for layer in model.pooled_layers(batch)])
    model.train()
    restore = torch.as_tensor(np.argsort(order))
    return [torch.cat(layer)[restore] for layer in zip(*chunks, strict=True)]


def _trim(tokens: torch.Tensor) -> torch.Tensor:
    """Drop the padding columns every row shares: (..., T) -> (..., T_used)."""
    used = int((tokens != PAD).flatten(0, -2).any(dim=0).nonzero().max()) + 1
    return tokens[..., :used]


def _autocast(device: torch.device) -> torch.autocast:
    enabled = device.type == "cuda"
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=enabled)


def build_model(config: TrialConfig, data: TrialData, device: torch.device) -> TextEncoder:
    torch.manual_seed(config.seed)
    model = TextEncoder(
        PRESETS[config.model], data.vocab_size, data.max_len, causal=objective_of(config.objective).causal
    )
    return model.to(device)


class TrainingLoss(nn.Module):
    """The objective's loss on a batch of (B, views, T) token ids, as a module: DDP wraps it (its
    gradient hooks are set up in a forward). With a `replica`, the loss of the global batch."""

    def __init__(self, model: TextEncoder, config: TrialConfig, replica: Replica = SOLO) -> None:
        super().__init__()
        self.model, self.config, self.replica = model, config, replica

    def forward(self, batch: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        if objective_of(self.config.objective).causal:
            tokens = batch[:, 0]  # (B, T)
            logits, _ = self.model.next_token_logits(tokens)
            return ntp_loss(logits, tokens, self.replica)
        views = [self.model.embed(batch[:, v]) for v in range(batch.shape[1])]  # V x (B, P)
        sigreg = self.config.train.sigreg
        loss, _ = jepa_loss(views, sigreg.weight, sigreg.slices, generator, self.replica)
        return loss


def run_trial(
    config: TrialConfig,
    on_checkpoint: Callable[[SavedCheckpoint], None],
    resume: SavedCheckpoint | None = None,
    device: str = "cpu",
    cache_dir: Path = DEFAULT_CACHE,
    host: str | None = None,
    replica: Replica = SOLO,
    on_follow: Callable[[], None] = lambda: None,
) -> TrialOutcome:
    """Train one trial to its sample budget, handing out every checkpoint; resume from `resume`.
    `host` names where it runs in its reports (default: this machine's name). In a data-parallel
    trial, each process passes its `replica`; those that do not lead call `on_follow` where the
    leader calls `on_checkpoint`."""
    started = time.perf_counter()
    torch_device = torch.device(device)
    data = open_trial_data(config, cache_dir, prefetch_workers(device))
    # only the leader evaluates: a follower prepares no scorer
    scorer = scorer_for(data.eval_set, config.eval) if replica.leads else None
    model = build_model(config, data, torch_device)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.train.lr, weight_decay=config.train.weight_decay
    )
    budget, batch_size = config.budget_samples, config.train.batch_size
    total_steps = math.ceil(budget / batch_size)
    schedule = config.checkpoints
    state, history = TrainState(), ()
    if resume is not None:
        model.load_state_dict(resume.model)
        optimizer.load_state_dict(resume.optim)
        torch.set_rng_state(resume.rng)
        state, history = TrainState.from_dict(resume.state.as_dict()), resume.history
    preset = PRESETS[config.model]
    host = host or socket.gethostname()
    wall_before = state.wall_s
    reported = []
    training_loss = replica.wrap(TrainingLoss(model, config, replica), torch_device)
    last: SavedCheckpoint | None = None

    while True:
        if state.next_checkpoint < len(schedule) and state.samples_seen >= schedule[state.next_checkpoint]:
            state.wall_s = wall_before + time.perf_counter() - started
            if scorer is not None:
                last = _checkpoint(model, optimizer, data, scorer, config, state, torch_device, host, history)
                on_checkpoint(last)
                history = last.history
            else:
                _advance(state)
                on_follow()
            reported.append(state.samples_seen)
            if replica.agree(last is not None and last.report.status != TrialStatus.RUNNING, torch_device):
                status, reason = (last.report.status, last.report.reason) if last else (None, None)
                return TrialOutcome(status, reason, state.samples_seen, last, reported)
        count = min(batch_size, budget - state.samples_seen)
        rows = torch.as_tensor(data.take(state.samples_seen, count), dtype=torch.long)
        _count_work(state, rows, preset, config.objective, data.vocab_size)  # the global batch's
        batch = _trim(rows[replica.rows(count)])
        if torch_device.type == "cuda":
            batch = batch.pin_memory().to(torch_device, non_blocking=True)
        lr = get_lr(state.step, total_steps, config.train.lr, config.train.warmup, config.train.schedule)
        loss = _train_step(training_loss, replica, optimizer, batch, config, state.step, lr)
        state.samples_seen += count
        state.step += 1
        state.loss_sum += loss
        state.loss_count += 1


def _count_work(
    state: TrainState, rows: torch.Tensor, preset: Preset, objective: str, vocab_size: int
) -> None:
    """Add a global batch (count, views, T) to the tokens, positions and FLOPs trained, as one
    process runs it: padded to its longest row. A data-parallel trial counts the same, so that a
    trial's FLOPs, like its key, do not depend on its workers."""
    state.tokens += int((rows != PAD).sum())
    padded = _trim(rows)
    sequences, length = padded.shape[0] * padded.shape[1], padded.shape[-1]
    state.positions += sequences * length
    state.flops += train_flops(preset, objective, sequences, length, vocab_size)


def _train_step(
    training_loss: nn.Module,
    replica: Replica,
    optimizer: torch.optim.Optimizer,
    batch: torch.Tensor,
    config: TrialConfig,
    step: int,
    lr: float,
) -> float:
    """One optimiser step on a batch of (B, views, T) ids; returns the (global batch's) loss.
    SIGReg's random directions come from (seed, step), so a resumed trial, and every replica of
    a data-parallel one, draws the same ones."""
    for group in optimizer.param_groups:
        group["lr"] = lr
    generator = torch.Generator().manual_seed(config.seed * 1_000_003 + step)
    with _autocast(batch.device):
        loss = training_loss(batch, generator)
    optimizer.zero_grad(set_to_none=True)
    replica.for_backward(loss).backward()
    if config.train.grad_clip is not None:
        torch.nn.utils.clip_grad_norm_(training_loss.parameters(), config.train.grad_clip)
    optimizer.step()
    return float(loss.detach())


def _checkpoint(
    model: TextEncoder,
    optimizer: torch.optim.Optimizer,
    data: TrialData,
    scorer: CheckpointScorer | PlatonicRepScorer,
    config: TrialConfig,
    state: TrainState,
    device: torch.device,
    host: str,
    history: tuple[Measurement, ...],
) -> SavedCheckpoint:
    """Score the eval set, check for collapse, and advance `state` past this checkpoint."""
    eval_set = data.eval_set
    layers = embed_layers(model, eval_set.tokens, device)
    mean_loss = state.mean_loss
    reason = None
    if mean_loss is not None and not math.isfinite(mean_loss):
        reason = f"training loss is {mean_loss} at step {state.step}"
    scored: list[Score] = []
    if reason is None:
        embeddings = _final_embeddings(model, layers, device, config)
        if state.initial_spread is None:  # S = 0: the untrained encoder
            state.initial_spread = relative_spread(embeddings)
        reason = detect_collapse(embeddings, state.initial_spread)
        retrieval_layers = (
            embed_layers(model, eval_set.retrieval_tokens, device) if scorer.needs_retrieval_set else []
        )
        scored = scorer.score(layers, retrieval_layers)
    if mean_loss is not None and math.isfinite(mean_loss):
        scored.append(Score(TRAIN_LOSS, "", mean_loss))
        scored.append(Score(TOKENS_PER_SAMPLE, "", state.tokens / state.samples_seen))
        scored.append(Score(POSITIONS_PER_SAMPLE, "", state.positions / state.samples_seen))
    rows = _rows(config, state, eval_set.name, scored)
    _advance(state)
    status = TrialStatus.COLLAPSED if reason is not None else TrialStatus.RUNNING
    if status == TrialStatus.RUNNING and state.samples_seen >= config.budget_samples:
        status = TrialStatus.DONE
    report = CheckpointReport(
        trial_key=config.key,
        samples_seen=state.samples_seen,
        status=status,
        reason=reason,
        n_params=model.n_params,
        host=host,
        device=str(device),
        rows=rows,
    )
    return SavedCheckpoint(
        model={k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
        optim=copy.deepcopy(optimizer.state_dict()),  # later steps update it in place
        rng=torch.get_rng_state(),
        state=TrainState.from_dict(state.as_dict()),  # a copy: training goes on moving `state`
        report=report,
        history=(*history, *rows),
    )


def _rows(
    config: TrialConfig, state: TrainState, eval_set: str, scored: list[Score]
) -> tuple[Measurement, ...]:
    """The checkpoint's scores as the store's rows (the training loss on the `train` set)."""
    return tuple(
        Measurement(
            trial_key=config.key,
            samples_seen=state.samples_seen,
            metric=score.metric,
            reference=score.reference,
            eval_set="train" if score.metric in TRAINING_ROWS else eval_set,
            value=float(score.value),
            step=state.step,
            flops=state.flops,
            wall_s=state.wall_s,
            se=score.se,
            null_mean=score.null_mean,
            null_p95=score.null_p95,
            chance=score.chance,
        )
        for score in scored
    )


def _advance(state: TrainState) -> None:
    """Past a checkpoint: the next one is due, and the training loss starts a new mean."""
    state.next_checkpoint += 1
    state.loss_sum, state.loss_count = 0.0, 0


@torch.no_grad()
def _final_embeddings(
    model: TextEncoder, layers: list[torch.Tensor], device: torch.device, config: TrialConfig
) -> torch.Tensor:
    """The representation the objective shapes: JEPA's projector output, else the last layer."""
    if objective_of(config.objective).causal:
        return layers[-1]
    return model.projector(layers[-1].to(device)).float().cpu()
