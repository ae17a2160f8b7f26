"""`orch sweep --until-decided` on planted truths (`fits.planted.loop_check`): for each truth, the
share of wrong verdicts (goal at most 5%) and of decided ones under both stopping rules (naive:
the first decided 95% look; spent: the looks share 5%, the driver's rule), the mean FLOPs the loop
spent, and the FLOPs a uniform grid needs for the same decided rate (interpolated in log FLOPs
between the grids; goal: the loop at most 0.5x).

    python bench/loop.py                               # 300 replicates of each truth, 2 processes
    python bench/loop.py --replicates 20 --save out.jsonl
    python bench/loop.py --load out.jsonl              # the figures again, from saved outcomes
"""

import argparse
import contextlib
import dataclasses
import itertools
import json
import time
from pathlib import Path

import numpy as np

from fits.planted.calibration import binomial_se
from fits.planted.loop_check import BUDGET, EXPERIMENTS, GRIDS, MAX_ROUNDS, LoopOutcome, loop_outcomes

WRONG_AT_MOST = 0.05
FLOPS_GOAL = 0.5


def _share(flags: list[bool]) -> str:
    share = float(np.mean(flags))
    return f"{100 * share:.1f}% ± {100 * binomial_se(share, len(flags)):.1f}%"


def _grid_flops_at(rate: float, mine: list[LoopOutcome]) -> tuple[float | None, str]:
    """The FLOPs a uniform grid needs to decide as often as `rate`: log-linear between the two
    grids around it; None where no grid decides that often."""
    points = sorted(
        (mine[0].grids[name][1], float(np.mean([o.grids[name][0] != "inconclusive" for o in mine])))
        for name in GRIDS
    )
    for (f0, r0), (f1, r1) in itertools.pairwise(points):
        if r0 <= rate <= r1 and r1 > r0:
            t = (rate - r0) / (r1 - r0)
            return float(np.exp(np.log(f0) + t * (np.log(f1) - np.log(f0)))), ""
    if points and rate <= points[0][1]:
        return points[0][0], " (the smallest grid already decides as often)"
    return None, ""


def report(outcomes: list[LoopOutcome]) -> list[str]:
    lines = [
        f"each truth: a start of 4 sizes x 1 seed per objective, then rounds of up to 4 runs, "
        f"at most {MAX_ROUNDS} rounds, a budget of {BUDGET:g}x the start's FLOPs"
    ]
    for experiment in EXPERIMENTS:
        mine = [o for o in outcomes if o.experiment == experiment]
        if not mine:
            continue
        lines.append(f"\n{experiment} ({len(mine)} replicates)")
        for rule in ("naive", "spent"):
            verdicts = [getattr(o, rule) for o in mine]
            wrong = [v == o.wrong for v, o in zip(verdicts, mine, strict=True)]
            decided = [v != "inconclusive" for v in verdicts]
            flops = float(np.mean([getattr(o, f"{rule}_flops") for o in mine]))
            grid, note = _grid_flops_at(float(np.mean(decided)), mine)
            if grid is None:  # beyond every grid: the largest one's FLOPs bound the ratio
                largest = max(mine[0].grids[name][1] for name in GRIDS)
                ratio = f"< {flops / largest:.2f}x (no uniform grid up to the largest decides as often)"
            else:
                ratio = f"{flops / grid:.2f}x{note}"
            ok = "ok" if np.mean(wrong) <= WRONG_AT_MOST else "MISSED"
            lines.append(
                f"  {rule:5}: wrong {_share(wrong)} ({ok}, goal <= {WRONG_AT_MOST:.0%}), "
                f"decided {_share(decided)}, "
                f"mean FLOPs {flops:.3g}; a uniform grid deciding as often: "
                f"{'-' if grid is None else f'{grid:.3g}'} FLOPs; loop/grid {ratio} (goal <= {FLOPS_GOAL:g}x)"
            )
        rounds = np.bincount([o.rounds for o in mine], minlength=MAX_ROUNDS + 1)
        lines.append(f"  rounds the spent rule ran (0..{MAX_ROUNDS}): {rounds.tolist()}")
        for name in GRIDS:
            verdicts = [o.grids[name][0] for o in mine]
            wrong = [v == o.wrong for v, o in zip(verdicts, mine, strict=True)]
            lines.append(
                f"  grid {name:10} ({mine[0].grids[name][1]:.3g} FLOPs): decided "
                f"{_share([v != 'inconclusive' for v in verdicts])}, wrong {_share(wrong)}"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--replicates", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--all",
        action="store_true",
        help="Also a true level and a false order claim (the issue's four by default).",
    )
    parser.add_argument(
        "--save", type=Path, default=None, help="Write every replicate's outcome here (JSON)."
    )
    parser.add_argument("--load", type=Path, default=None, help="Report saved outcomes; run nothing.")
    args = parser.parse_args()
    if args.load:
        outcomes = [LoopOutcome(**json.loads(line)) for line in args.load.read_text().splitlines()]
    else:
        started, outcomes = time.perf_counter(), []
        truths = tuple(EXPERIMENTS) if args.all else tuple(EXPERIMENTS)[:4]
        with args.save.open("w") if args.save else contextlib.nullcontext() as saved:
            for outcome in loop_outcomes(args.replicates, truths, seed=args.seed, workers=args.workers):
                outcomes.append(outcome)
                if saved:  # a line as each replicate ends: a stopped run's outcomes still report
                    saved.write(json.dumps(dataclasses.asdict(outcome)) + "\n")
                    saved.flush()
        took = time.perf_counter() - started
        print(f"{len(outcomes)} replicates in {took:.0f} s on {args.workers} processes")
    print("\n".join(report(outcomes)))


if __name__ == "__main__":
    main()
