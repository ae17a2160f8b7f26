"""Alignment metrics at scale: blockwise/streamed against the dense n x n way, side by side.

Each case runs in its own process (this file with --case) so its peak memory (ru_maxrss) is
its own. Prints time, peak memory and dense/blockwise ratios at n = 1024 and at the largest n
where dense still fits comfortably, then n = 100,000 blockwise. d = 768, k = 10, float32.

    python bench/alignment.py            # 1024 and 16384 both ways, then 100000 blockwise
    python bench/alignment.py --quick    # 1024 and 8192 only
"""

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np
import torch

from orchestrator.alignment import cka, cknna, mutual_knn

WIDTH, K = 768, 10


def features(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Two noisy views of a shared 32-d latent, (n, 768) each."""
    rng = np.random.default_rng(0)
    latent = rng.normal(size=(n, 32)).astype(np.float32)
    views = []
    for _ in range(2):
        mixing = rng.normal(size=(32, WIDTH)).astype(np.float32)
        views.append(torch.from_numpy(latent @ mixing + rng.normal(size=(n, WIDTH)).astype(np.float32)))
    return views[0], views[1]


def dense_knn(x: torch.Tensor, k: int) -> torch.Tensor:
    x = x / x.norm(dim=1, keepdim=True)
    sims = x @ x.T  # the n x n matrix
    sims.fill_diagonal_(-float("inf"))
    return sims.topk(k, dim=1).indices


def dense_mutual_knn(a: torch.Tensor, b: torch.Tensor, k: int) -> float:
    na, nb = dense_knn(a, k), dense_knn(b, k)
    return float((na[:, :, None] == nb[:, None, :]).any(2).float().sum(1).mean() / k)


def dense_cka(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a - a.mean(0), b - b.mean(0)
    gram_a, gram_b = a @ a.T, b @ b.T  # the n x n Gram matrices
    return float((gram_a * gram_b).sum() / (gram_a.norm() * gram_b.norm()))


SCORERS = {
    ("dense", "mutual_knn"): lambda a, b: dense_mutual_knn(a, b, K),
    ("dense", "cka"): dense_cka,
    ("blockwise", "mutual_knn"): lambda a, b: mutual_knn(a, b, K),
    ("blockwise", "cknna"): lambda a, b: cknna(a, b, K),
    ("blockwise", "cka"): cka,
}


def case(n: int, way: str, metric: str) -> None:
    torch.set_num_threads(2)
    a, b = features(n)
    inputs = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    value = SCORERS[(way, metric)](a, b)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {"value": value, "seconds": seconds, "peak_mib": peak / 1024, "work_mib": (peak - inputs) / 1024}
        )
    )


def run(n: int, way: str, metric: str) -> dict:
    command = [sys.executable, __file__, "--case", str(n), way, metric]
    output = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(output.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--case", nargs=3, metavar=("N", "WAY", "METRIC"))
    args = parser.parse_args()
    if args.case:
        case(int(args.case[0]), args.case[1], args.case[2])
        return
    header = f"{'n':>7} {'metric':<11} {'dense s':>8} {'block s':>8} {'time x':>7} "
    header += f"{'dense MiB':>10} {'blk MiB':>8}"
    print(header + "  |dense - blockwise|")
    for n in [1024, 8192] if args.quick else [1024, 16384]:
        for metric in ("mutual_knn", "cka"):
            dense, block = run(n, "dense", metric), run(n, "blockwise", metric)
            print(
                f"{n:>7} {metric:<11} {dense['seconds']:>8.2f} {block['seconds']:>8.2f} "
                f"{dense['seconds'] / block['seconds']:>7.2f} {dense['work_mib']:>10.0f} "
                f"{block['work_mib']:>8.0f}  {abs(dense['value'] - block['value']):.1e}"
            )
    print("(MiB: peak memory above the inputs in the case's own process; the dense way sums in float32,")
    print(" blockwise CKA accumulates in float64, which is where their values differ)")
    if not args.quick:
        for metric in ("mutual_knn", "cknna", "cka"):
            big = run(100_000, "blockwise", metric)
            print(
                f"n=100000 {metric}: {big['seconds']:.1f} s, peak {big['peak_mib']:.0f} MiB in all ("
                f"inputs), {big['work_mib']:.0f} MiB above the inputs, value {big['value']:.4f}"
            )


if __name__ == "__main__":
    main()
