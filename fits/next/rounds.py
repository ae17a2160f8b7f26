"""The closed loop's rules (`orch sweep --until-decided`), shared by the driver and by the
simulation that measures the loop's error rates (`fits.planted.loop_check`): how much of the
budget a round may spend, the confidence each look judges at, and why the loop stops.

Adaptive stopping looks at the verdicts after every round and stops once they are decided, so
a claim gets several chances to be decided by noise. The looks spend the error rate between
them (Bonferroni): with at most L looks, each judges at 1 - ALPHA / L, and the chance that any
look gives a wrong verdict stays at most ALPHA whatever the rounds bought. The simulation
measures what that costs in decisions, and what stopping at the first 95% decision would risk.
"""

from enum import StrEnum

__all__ = ["ALPHA", "Stop", "look_confidence", "round_budget"]

ALPHA = 0.05  # the error rate the looks share


class Stop(StrEnum):
    """Why the loop ended, in the words the driver prints."""

    DECIDED = "every claim is decided"
    BUDGET = "the budget is spent: no candidate run fits in what is left"
    ROUNDS = "--max-rounds rounds have run"
    NOTHING = "no candidate run narrows any open claim"
    UNPLANNED = "the open claims are not planned by orch next (forecast or baseline claims)"

    def __str__(self) -> str:
        return self.value


def look_confidence(max_rounds: int, alpha: float = ALPHA) -> float:
    """The confidence each look judges at: the grid's look and one after each of `max_rounds`
    rounds share `alpha`."""
    return 1.0 - alpha / (max_rounds + 1)


def round_budget(left: float, rounds_left: int) -> float:
    """What one round may spend: the budget left spread over the rounds left, so that the first
    round's picks do not take what later, better-informed rounds would use."""
    return left / max(rounds_left, 1)
