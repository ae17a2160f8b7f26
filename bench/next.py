"""`orch next` against four simple designs on planted truths (`fits.planted.plan_check`): median width of
the final 95% gap interval (ln high/low; infinite where the verdict has no closed interval), its
coverage of the planted gap over the replicates with an interval (and the 90% interval's), the
share of correct verdicts,
each with its SE, and orch next's width ratios to each design with a paired bootstrap's upper 95%
bound; then the planner's time for 10 curves x 30 candidates x 4000 draws.

    python bench/next.py                     # 300 replicates on 2 processes
    python bench/next.py --replicates 50
"""

import argparse
import time

import numpy as np

from fits.claims.claim import Claim, Region
from fits.next.outlook import Cell
from fits.next.plan import plan_runs
from fits.planted.calibration import binomial_se, planted_curve, planted_run
from fits.planted.plan_check import compare_designs, summarize
from fits.planted.procedure import SIZES, draw_truth, simulate

BOOTSTRAP = 2000


def _median_se(widths: np.ndarray, rng: np.random.Generator) -> float:
    picks = rng.integers(len(widths), size=(BOOTSTRAP, len(widths)))
    medians = np.median(widths[picks], axis=1)
    finite = medians[np.isfinite(medians)]
    return float(np.std(finite)) if len(finite) > 1 else float("nan")


def _ratio_bound(mine: np.ndarray, theirs: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """The ratio of median widths (paired), and its bootstrap upper 95% bound."""
    picks = rng.integers(len(mine), size=(BOOTSTRAP, len(mine)))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.median(mine[picks], axis=1) / np.median(theirs[picks], axis=1)
        point = np.median(mine) / np.median(theirs)
    known = ratios[~np.isnan(ratios)]  # inf / inf: both medians open
    bound = np.percentile(known, 95, method="higher") if known.size else np.nan  # no arithmetic on inf
    return float(point), float(bound)


def compare(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    outcomes = compare_designs(args.replicates, seed=args.seed, workers=args.workers)
    took = time.perf_counter() - started
    rng = np.random.default_rng(args.seed)
    for title, families in (
        ("the four law families and one outside them", None),
        ("the truth outside every family", {"outside"}),
    ):
        found = summarize(outcomes, families)
        n = len(found["uniform grid"].widths)
        print(f"{title}: {n} replicates ({took:.0f} s on {args.workers} processes for all)")
        for design, row in found.items():
            print(
                f"  {design:>15}: median width {row.median_width:.3f} +- {_median_se(row.widths, rng):.3f}"
                f"; coverage {row.coverage:.1%} +- {binomial_se(row.coverage, max(row.covered.size, 1)):.1%}"
                f" of {row.covered.size} (at 90%: {row.coverage_90:.1%} +- "
                f"{binomial_se(row.coverage_90, max(row.covered_90.size, 1)):.1%} of {row.covered_90.size})"
                f"; correct verdict {row.correct_share:.1%} "
                f"+- {binomial_se(row.correct_share, n):.1%}; mean FLOPs {row.flops.mean():.3g}"
            )
        for other in ("uniform grid", "random", "cheapest first", "largest + seeds"):
            ratio, bound = _ratio_bound(found["orch next"].widths, found[other].widths, rng)
            note = (
                " (its median interval is open: half its replicates or more have none)" if ratio == 0 else ""
            )
            print(
                f"  orch next / {other}: median width x{ratio:.3f}{note} "
                f"(paired bootstrap upper 95%: x{bound:.3f})"
            )


def timing(args: argparse.Namespace) -> None:
    """5 gap claims on 10 planted curves, 3 candidate sizes each (30 cells), 4000 draws, 4 runs."""
    rng = np.random.default_rng(args.seed)
    curves = [
        planted_curve(f"o{i}", simulate(rng, draw_truth(rng), sizes=SIZES[:6], seeds=2)) for i in range(10)
    ]
    run = planted_run(*curves)
    claims = [
        Claim(f"gap{i}", "gap", "", "bench", Region(2.0, 50.0), faster=f"o{2 * i}", slower=f"o{2 * i + 1}")
        for i in range(5)
    ]
    cells = [Cell(f"o{i}", "m", float(s), 1, float(s)) for i in range(10) for s in SIZES[5:8]]
    started = time.perf_counter()
    plan = plan_runs(run, claims, cells, runs=4)
    print(
        f"planner: 10 curves x {len(cells)} candidates x 4000 draws, 4 picks: "
        f"{time.perf_counter() - started:.1f} s ({len(plan.picks)} picks)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--replicates", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", choices=["compare", "timing"], default=None)
    args = parser.parse_args()
    for section in (timing, compare):
        if args.only in (None, section.__name__):
            section(args)


if __name__ == "__main__":
    main()
