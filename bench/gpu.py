"""The trainer's step on a GPU: the `base` preset (BERT-B shape) running JEPA and NTP optimiser
steps in bf16 autocast at batch 256 and 64 tokens, with torch.compile off and on, side by side.
Prints samples/s and MFU: training FLOPs per second (6 x matmul parameters x tokens, as the
dry run counts them) over the device's peak, which you give. Then the same step inside a
one-process DDP group (NCCL on a GPU, gloo on the CPU), as a data-parallel trial's worker runs
it, against the plain step, interleaved: the wrapper's overhead (goal: at least 0.97x).

    python bench/gpu.py --peak-tflops 989      # H100/H200 SXM dense bf16
    python bench/gpu.py                         # no GPU: the tiny preset on CPU, said so

Where there is no GPU it runs the `tiny` preset at batch 32 on the CPU and prints that it did:
those figures say nothing about a GPU.
"""

import argparse
import tempfile
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from orchestrator.sweepfile import parse_spec
from orchestrator.sweepfile.catalog import PRESETS, train_flops
from orchestrator.training.encoders import TextEncoder
from orchestrator.training.loop import TrainingLoss, _autocast

TOKENS, VOCAB = 64, 30522


def trial(objective: str, model: str):
    grid = {"objective": [objective], "model": [model], "data_size": ["1M"], "seed": [0]}
    return parse_spec({"name": "gpu", "grid": grid}, "gpu.yaml").trials[0]


def samples_per_second(
    objective: str, model: str, batch: int, device: torch.device, compiled: bool, ddp: bool = False
) -> float:
    config = trial(objective, model)
    torch.manual_seed(0)
    encoder = TextEncoder(PRESETS[model], VOCAB, TOKENS, causal=objective == "ntp").to(device)
    training_loss = TrainingLoss(encoder, config)  # the whole loss, embed or LM head included
    if ddp:
        ids = [0] if device.type == "cuda" else None
        training_loss = DistributedDataParallel(training_loss, device_ids=ids)
    loss_of = torch.compile(training_loss) if compiled else training_loss
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=1e-4)
    views = 1 if objective == "ntp" else 2
    tokens = torch.randint(4, VOCAB, (batch, views, TOKENS), device=device)
    generator = torch.Generator().manual_seed(0)

    def step() -> None:
        with _autocast(device):
            loss = loss_of(tokens, generator)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    for _ in range(3):  # warm-up (and compilation)
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    steps, started = 10, time.perf_counter()
    for _ in range(steps):
        step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return steps * batch / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peak-tflops", type=float, default=None, help="The device's dense bf16 peak.")
    args = parser.parse_args()
    gpu = torch.cuda.is_available()
    device = torch.device("cuda" if gpu else "cpu")
    model, batch = ("base", 256) if gpu else ("tiny", 32)
    where = torch.cuda.get_device_name() if gpu else "CPU (no GPU here: these figures say nothing about one)"
    print(f"{where}: preset {model}, batch {batch}, {TOKENS} tokens, bf16 autocast {'on' if gpu else 'off'}")
    for objective in ("jepa_good", "ntp"):
        for compiled in (False, True):
            rate = samples_per_second(objective, model, batch, device, compiled)
            views = 1 if objective == "ntp" else 2
            flops = train_flops(PRESETS[model], objective, rate * views, TOKENS, VOCAB)
            mfu = (
                f"MFU {flops / (args.peak_tflops * 1e12):.1%}"
                if args.peak_tflops
                else "MFU: give --peak-tflops"
            )
            print(
                f"{objective:>9} compile {'on ' if compiled else 'off'}: {rate:9,.0f} samples/s, "
                f"{flops / 1e12:7.2f} TFLOP/s, {mfu}"
            )
    ddp_overhead(model, batch, device)


def ddp_overhead(model: str, batch: int, device: torch.device, rounds: int = 3) -> None:
    """The plain step against the same step under DDP in a one-process group, interleaved."""
    with tempfile.TemporaryDirectory() as folder:
        backend = "nccl" if device.type == "cuda" else "gloo"
        dist.init_process_group(backend, init_method=f"file://{folder}/rendezvous", rank=0, world_size=1)
        try:
            for objective in ("jepa_good", "ntp"):
                plain, wrapped = [], []
                for _ in range(rounds):
                    for ddp, rates in ((False, plain), (True, wrapped)):
                        rates.append(samples_per_second(objective, model, batch, device, False, ddp))
                ratio = sorted(w / p for w, p in zip(wrapped, plain, strict=True))[rounds // 2]
                print(
                    f"{objective:>9} DDP worker ({backend}, 1 process): {sorted(wrapped)[rounds // 2]:9,.0f} "
                    f"samples/s against {sorted(plain)[rounds // 2]:,.0f} plain: {ratio:.3f}x "
                    f"(median of {rounds} interleaved rounds; goal at least 0.97x)"
                )
        finally:
            dist.destroy_process_group()


if __name__ == "__main__":
    main()
