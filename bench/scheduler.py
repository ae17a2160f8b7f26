"""Scheduling efficiency: a sweep's trials under `orch sweep` (Ray Tune, store callback, local Ray
start included; short trials packed, and again with `--no-pack`) against the same trials in a
plain process pool of the same concurrency, in interleaved rounds in one run. Goal: a median
ratio pool/orch of at least 0.95. Then how well orch's order (longest first) fills the slots: the
sweep's wall time against the larger of its longest trial and the sum of its trials' times over
the slots (goal: at most 1.1x).

    python bench/scheduler.py --rounds 1                       # the whole embedded sweep
    python bench/scheduler.py --sizes 2K 4K 8K --concurrency 2   # its grid at these data sizes
    python bench/scheduler.py --orch-only                      # orch alone: the order's figures
    python bench/scheduler.py --warm                           # 64 short trials on a running Ray

`--warm` is short work on a Ray that is already up (`ray start --head`, as `orch sweep --address`
joins one): 64 short trials under orch, joining that head, against the process pool, in
interleaved rounds (goal: a median ratio pool/orch of at least 0.95), each trial's overhead in
seconds, and, apart, what a cold start (orch starting and stopping its own Ray) adds.
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import psutil
import yaml

from db import Store
from db.rates import finished_trainings
from orchestrator.run.packing import PACK_BELOW_S
from orchestrator.run.plan import makespan
from orchestrator.run.scheduler import SweepOptions, run_sweep
from orchestrator.sweepfile import Spec, TrialConfig, parse_spec

SWEEP = Path(__file__).resolve().parents[1] / "sweeps" / "goodview_vs_ntp.yaml"


def _pool_trial(config_json: str, cache: str) -> int:
    import torch

    from orchestrator.training.loop import run_trial

    torch.set_num_threads(1)
    rows: list = []
    run_trial(TrialConfig.from_json(config_json), lambda c: rows.extend(c.report.rows), cache_dir=Path(cache))
    return len(rows)


def pool_seconds(spec: Spec, concurrency: int) -> float:
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder, ProcessPoolExecutor(concurrency) as pool:
        configs = [t.to_json() for t in spec.trials]
        assert all(pool.map(_pool_trial, configs, [folder] * len(spec.trials)))  # every trial made rows
    return time.perf_counter() - start


def orch_seconds(
    spec: Spec, concurrency: int, pack_below_s: float, address: str | None = None
) -> tuple[float, list[float]]:
    """The sweep's wall time (Ray's start included, unless it joins the head at `address`), and
    each trial's own time."""
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        options = SweepOptions(
            max_concurrent=concurrency,
            num_cpus=None if address else concurrency,
            storage=Path(folder),
            pack_below_s=pack_below_s,
            address=address,
        )
        outcome = run_sweep(spec, f"sqlite:///{folder}/bench.db", options)
        seconds = time.perf_counter() - start
        assert outcome.counts == {"done": len(spec.trials)}, outcome.counts
        objectives = {trial.objective for trial in spec.trials}
        finished = finished_trainings(Store.open(f"sqlite:///{folder}/bench.db"), objectives)
        return seconds, [wall_s for _, _, wall_s in finished]  # each trial's whole run, evaluation included


@contextmanager
def running_head(cpus: int) -> Iterator[str]:
    """A Ray head started as a user starts one (`ray start --head`, token-authenticated, in its own
    temp dir and home), its address while it runs; stopped by its processes' PIDs, never by name."""
    ray = str(Path(sys.executable).with_name("ray"))
    home, temp = Path(tempfile.mkdtemp(prefix="orch-home-")), tempfile.mkdtemp(prefix="orch-rw-", dir="/tmp")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")} | {"HOME": str(home)}
    run = {"env": env, "check": True, "capture_output": True, "timeout": 120}
    subprocess.run([ray, "get-auth-token", "--generate"], **run)
    head = [ray, "start", "--head", f"--port={port}", f"--num-cpus={cpus}", "--include-dashboard=false"]
    subprocess.run([*head, "--disable-usage-stats", f"--temp-dir={temp}"], **run)
    os.environ["RAY_AUTH_TOKEN_PATH"] = str(home / ".ray" / "auth_token")  # this driver joins with it
    try:
        yield f"127.0.0.1:{port}"
    finally:
        del os.environ["RAY_AUTH_TOKEN_PATH"]
        marks = (temp, f"127.0.0.1:{port}")
        mine = [
            p
            for p in psutil.process_iter(["cmdline"])
            if p.pid != os.getpid() and any(m in " ".join(p.info["cmdline"] or []) for m in marks)
        ]
        for process in mine:
            process.kill()
        psutil.wait_procs(mine, timeout=30)


def cold_seconds(raw: dict, concurrency: int) -> float:
    """The same sweep by `orch sweep` in a process of its own, starting and stopping its own Ray
    (in this process, Ray's state from joining the head would follow it)."""
    with tempfile.TemporaryDirectory() as folder:
        sweep = Path(folder) / "warm.yaml"
        sweep.write_text(yaml.safe_dump({**raw, "store": f"sqlite:///{folder}/cold.db"}))
        orch = [sys.executable, "-m", "orchestrator", "sweep", str(sweep), "--storage", f"{folder}/runs"]
        orch += ["--num-cpus", str(concurrency), "--max-concurrent", str(concurrency)]
        start = time.perf_counter()
        subprocess.run(orch, check=True, capture_output=True, cwd=SWEEP.parent)
        return time.perf_counter() - start


def warm(concurrency: int, rounds: int) -> None:
    """64 short trials on a running head against the process pool; the cold start apart."""
    raw = yaml.safe_load(SWEEP.read_text())
    raw["grid"] = {"objective": ["jepa_good", "ntp"], "model": ["tiny"], "data_size": ["1K", "2K"]}
    raw["grid"]["seed"] = list(range(16))
    raw.pop("holdout", None)
    raw.pop("claims", None)
    spec = parse_spec(raw, str(SWEEP), base_dir=SWEEP.parent)
    count = len(spec.trials)
    print(f"{count} short trials, concurrency {concurrency}, {rounds} interleaved rounds, Ray already up")
    pools, warms = [], []
    with running_head(concurrency) as address:
        for round_ in range(rounds):
            pools.append(pool_seconds(spec, concurrency))
            warms.append(orch_seconds(spec, concurrency, PACK_BELOW_S, address=address)[0])
            print(f"round {round_ + 1}: pool {pools[-1]:.1f} s, orch on the running head {warms[-1]:.1f} s")
    cold = cold_seconds(raw, concurrency)
    ratios = [pool / orch for pool, orch in zip(pools, warms, strict=True)]
    overhead = statistics.median((orch - pool) / count for pool, orch in zip(pools, warms, strict=True))
    print(
        f"ratio pool/orch, warm: median {statistics.median(ratios):.3f} of {_listed(ratios)} (goal >= 0.95)"
    )
    print(f"orch's overhead a trial, warm: {overhead:+.3f} s (median over rounds)")
    print(
        f"cold start apart: `orch sweep` starting its own Ray {cold:.1f} s against "
        f"{statistics.median(warms):.1f} s warm: {cold - statistics.median(warms):.1f} s for the process's "
        "start (imports included) and Ray's start and stop"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="*", default=None, help="Run the grid at these data sizes.")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="Interleaved rounds; the median is the figure.")
    parser.add_argument("--orch-only", action="store_true", help="Skip the process pool and --no-pack.")
    parser.add_argument("--warm", action="store_true", help="64 short trials on an already running Ray.")
    args = parser.parse_args()
    if args.warm:
        warm(args.concurrency, args.rounds)
        return
    raw = yaml.safe_load(SWEEP.read_text())
    if args.sizes:
        raw["grid"]["data_size"] = args.sizes
    spec = parse_spec(raw, str(SWEEP), base_dir=SWEEP.parent)
    print(f"{len(spec.trials)} trials, concurrency {args.concurrency}, {args.rounds} interleaved rounds")
    pools, packed, unpacked = [], [], []
    for round_ in range(args.rounds):
        if not args.orch_only:
            pools.append(pool_seconds(spec, args.concurrency))
            unpacked.append(orch_seconds(spec, args.concurrency, pack_below_s=0.0)[0])
        sweep_s, trial_s = orch_seconds(spec, args.concurrency, PACK_BELOW_S)
        packed.append(sweep_s)
        times = "" if args.orch_only else f"pool {pools[-1]:.1f} s, orch --no-pack {unpacked[-1]:.1f} s, "
        print(f"round {round_ + 1}: {times}orch {sweep_s:.1f} s")
    if not args.orch_only:
        ratios = [pool / orch for pool, orch in zip(pools, packed, strict=True)]
        alone = [pool / orch for pool, orch in zip(pools, unpacked, strict=True)]
        median = statistics.median(ratios)
        print(f"ratio pool/orch (packed): median {median:.3f} of {_listed(ratios)} (goal >= 0.95)")
        print(f"ratio pool/orch --no-pack: median {statistics.median(alone):.3f} of {_listed(alone)}")
    longest, spread = max(trial_s), sum(trial_s) / args.concurrency
    ideal = makespan([(seconds, 1) for seconds in trial_s], args.concurrency)
    print(
        f"orch's order (the last round): sweep {sweep_s:.1f} s (Ray's start included), longest trial "
        f"{longest:.1f} s, sum of trials over {args.concurrency} slots {spread:.1f} s: "
        f"{sweep_s / max(longest, spread):.3f}x the larger (goal <= 1.1); these trial times packed "
        f"longest first, with no overhead, end at {ideal:.1f} s ({sweep_s / ideal:.3f}x)"
    )


def _listed(values: list[float]) -> str:
    return ", ".join(f"{value:.3f}" for value in values)


if __name__ == "__main__":
    main()
