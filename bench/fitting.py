"""The fitting procedure on planted truths (`fits.planted.procedure`), with fixed seeds: PI coverage at
each extrapolation ratio, the wrong-family rate, gap bias and coverage, the move one diverged seed
causes with and without Huber's loss, the joint law's coverage, the claims' verdict rates (a true
claim supported, a false one contradicted, each with its binomial SE), the same on a paper
reader's sparse evidence (`fits.planted.sparse`: wrong verdicts and the share decided, with
SEs), and bootstrap timings (1000 refits of 3 curves per law, batched against one refit at a
time, side by side in one run).

    python bench/fitting.py                 # 400 replicates per experiment, about 4 minutes
    python bench/fitting.py --replicates 100
    python bench/fitting.py --only verdicts --replicates 300
    python bench/fitting.py --only sparse --replicates 300
    python bench/fitting.py --only coverage --seeds 1   # one seed per size: noise from the residuals
"""

import argparse
import time

import numpy as np

from fits.curve.bootstrap import bootstrap_refits
from fits.curve.fit import fit_laws
from fits.curve.laws import LAWS
from fits.planted.calibration import GOALS, binomial_se, measured_gap_coverage, verdict_rates
from fits.planted.procedure import (
    SEEDS,
    draw_truth,
    forecast_check,
    gap_check,
    huber_shift,
    joint_check,
    simulate,
)
from fits.planted.sparse import DESIGNS, TRUTHS, WRONG, WRONG_AT_MOST, design_name, sparse_rates


def coverage(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    check = forecast_check(args.replicates, seed=args.seed, seeds=args.seeds)
    print(
        f"forecasts past 74M from {args.seeds} seed(s) a size, {check.cells} replicates "
        f"({time.perf_counter() - started:.1f} s):"
    )
    for ratio, share in check.coverage.items():
        se = binomial_se(share, check.cells)
        print(f"  {ratio:>2}x: PI coverage {share:.1%} +- {se:.1%}   rms z {check.rms_z[ratio]:.2f}")
    print(f"  wrong family weighs most: {check.wrong_family:.1%}")


def gaps(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    check = gap_check(args.replicates, seed=args.seed, seeds=args.seeds)
    took = time.perf_counter() - started
    print(
        f"gaps, planted {check.planted:g}x, {args.seeds} seed(s) a size, {check.replicates} replicates "
        f"({took:.1f} s):"
    )
    bias = check.median_ratio / check.planted
    print(f"  identifiable {check.identifiable:.0%}; median R {check.median_ratio:.3g} (bias x{bias:.3f})")
    print(
        f"  CI coverage {check.coverage:.1%}; CIs wider than 100x called identifiable: {check.wide_unflagged}"
    )


def robustness(args: argparse.Namespace) -> None:
    print("one seed diverged to 0.5x: largest parameter move in SEs, over 100 curves (median / max):")
    for delta in (None, 1e-3, 1e-2, 3e-2):
        moves = np.array([huber_shift(seed, huber=delta) for seed in range(100)])
        name = "least squares" if delta is None else f"huber {delta:g}"
        print(
            f"  {name:>13}: {np.median(moves):.3f} / {moves.max():.3f}   under 1 SE: {np.mean(moves < 1):.0%}"
        )


def joint(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    share = joint_check(args.replicates, seed=args.seed)
    se = binomial_se(share, args.replicates)
    took = time.perf_counter() - started
    print(f"joint law, 300M held out, {args.replicates} replicates ({took:.1f} s):")
    print(f"  PI coverage {share:.1%} +- {se:.1%}")


def timings(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed)
    curves = [simulate(rng, draw_truth(rng)) for _ in range(3)]
    fitted = [fit_laws(points) for points in curves]
    print("bootstrap, 1000 refits of 3 curves:")
    for name in LAWS:
        started = time.perf_counter()
        for points, fits in zip(curves, fitted, strict=True):
            bootstrap_refits(points, {name: fits[name]}, draws=1000)
        batched = time.perf_counter() - started
        started = time.perf_counter()
        for points, fits in zip(curves, fitted, strict=True):
            for seed in range(50):
                bootstrap_refits(points, {name: fits[name]}, draws=1, seed=seed)
        looped = (time.perf_counter() - started) * 1000 / 50
        print(
            f"  {name:>10}: {batched:.2f} s batched; one at a time ~{looped:.1f} s (x{looped / batched:.0f})"
        )


def verdicts(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    rates = verdict_rates(args.replicates, seed=args.seed, workers=args.workers)
    took = time.perf_counter() - started
    print(
        f"verdicts on planted truths, {rates.replicates} replicates each "
        f"({took:.1f} s on {args.workers} processes):"
    )
    for experiment, goals in GOALS.items():
        parts = []
        for verdict, side, goal in goals:
            share, se = rates.share(experiment, verdict), rates.se(experiment, verdict)
            met = rates.meets(experiment, verdict, side, goal)
            parts.append(
                f"{verdict} {share:.1%} +- {se:.1%} (goal {side} {goal:.0%}: {'met' if met else 'MISSED'})"
            )
        every = ", ".join(f"{v} {n}" for v, n in sorted(rates.counts[experiment].items()))
        print(f"  {experiment:>22}: " + "; ".join(parts) + f" [{every}]")
    for design, share in measured_gap_coverage(args.replicates, seed=args.seed).items():
        se = binomial_se(share, args.replicates)
        print(
            f"  the seed means' gap, {design}: 95% interval holds the planted 42x in {share:.1%} +- {se:.1%}"
        )


def sparse(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    rates = sparse_rates(args.replicates, seed=args.seed, workers=args.workers)
    took = time.perf_counter() - started
    print(
        f"'42 within x2' on sparse evidence (1 seed: no SE), {rates.replicates} replicates each "
        f"({took:.1f} s on {args.workers} processes); goal: wrong <= {WRONG_AT_MOST:.0%}:"
    )
    for sizes, seeds in DESIGNS:
        parts = []
        for truth in TRUTHS:
            name = design_name(sizes, seeds, truth)
            wrong = rates.share(name, WRONG[truth])
            decided = 1 - rates.share(name, "inconclusive")
            parts.append(
                f"{truth}: wrong {wrong:.1%} +- {rates.se(name, WRONG[truth]):.1%}, decided {decided:.1%} "
                f"+- {binomial_se(decided, rates.replicates):.1%}"
            )
        print(f"  {design_name(sizes, seeds, '')[:-2]:>16}: " + "; ".join(parts))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--replicates", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--seeds", type=int, default=SEEDS, help="seeds a size in the coverage and gap checks"
    )
    parser.add_argument("--workers", type=int, default=2, help="processes for the verdict rates")
    parser.add_argument(
        "--only",
        choices=["coverage", "gaps", "robustness", "joint", "verdicts", "sparse", "timings"],
        default=None,
    )
    args = parser.parse_args()
    sections = (coverage, gaps, robustness, joint, verdicts, sparse, timings)
    for section in sections if args.only is None else [s for s in sections if s.__name__ == args.only]:
        section(args)


if __name__ == "__main__":
    main()
