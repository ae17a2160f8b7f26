"""Round barriers against slot filling, for the closed loop of issue 47 (`orch sweep
--until-decided`), in simulation: the same picks, the same uneven trial times, on the same slots.

- Barriers: a round's picks run (longest first, `run.plan.makespan`), the loop waits for the
  round's last trial, plans the next round (`--plan-s`, the slots idle meanwhile), and so on.
- Slot filling: as a trial ends, its slot asks the planner for the next pick (`--plan-s` on that
  slot alone) and runs it; picks come in the order the rounds would have made them.

Trial times are lognormal around 1 (sigma `--spread`): a grid of sizes and objectives on one GPU
kind is uneven by a factor of several. Prints the median makespan of each and their ratio.

    python bench/rounds.py --slots 8 --rounds 4 --spread 0.5 1.0 --replicates 2000
"""

import argparse
import heapq

import numpy as np

from orchestrator.run.plan import makespan


def with_barriers(rounds: list[np.ndarray], slots: int, plan_s: float) -> float:
    """Each round waits for its last trial, then for the planner."""
    return sum(makespan([(t, 1) for t in times], slots) + plan_s for times in rounds)


def slot_filling(rounds: list[np.ndarray], slots: int, plan_s: float) -> float:
    """Each slot takes the next pick as it frees, after the planner's time on that slot."""
    free_at = [plan_s] * slots  # the first picks are planned once, before any slot starts
    heapq.heapify(free_at)
    end = 0.0
    for times in rounds:
        for hours in times:
            start = heapq.heappop(free_at)
            end = max(end, start + hours)
            heapq.heappush(free_at, start + hours + plan_s)
    return end


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--batch", type=int, default=None, help="picks a round (default: the slots)")
    parser.add_argument("--spread", type=float, nargs="+", default=[0.5, 1.0])
    parser.add_argument(
        "--plan-s", type=float, default=0.05, help="planning time, in units of a median trial"
    )
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    batch = args.batch or args.slots
    rng = np.random.default_rng(args.seed)
    for spread in args.spread:
        barriers, filling = [], []
        for _ in range(args.replicates):
            rounds = [rng.lognormal(0.0, spread, batch) for _ in range(args.rounds)]
            barriers.append(with_barriers(rounds, args.slots, args.plan_s))
            filling.append(slot_filling(rounds, args.slots, args.plan_s))
        ratio = np.median(np.array(filling) / np.array(barriers))
        print(
            f"spread {spread}: {args.rounds} rounds of {batch} picks on {args.slots} slots, planning "
            f"{args.plan_s} of a median trial: makespan with barriers {np.median(barriers):.2f}, "
            f"slot filling {np.median(filling):.2f} (median of {args.replicates}); "
            f"filling / barriers {ratio:.3f}"
        )


if __name__ == "__main__":
    main()
