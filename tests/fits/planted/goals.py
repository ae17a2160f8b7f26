"""The slow goals, as checks of plain figures: each takes what its slow test measured (numbers in a
dict, as the goal lock stores them) and returns the goals it misses, each as one line.

A goal is checked in full (its real bounds, at the replicates the slow phase runs) or as a smoke
check (a few replicates, loose bounds: a gross break, not a calibration). The slow tests assert
these; `tests.goal_lock` checks the figures the lock recorded against the same functions, so a
bound cannot differ between the test and the lock.
"""

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fits.planted.calibration import GOALS as VERDICT_GOALS
from fits.planted.sparse import WRONG, WRONG_AT_MOST

__all__ = ["FIGURES_ENV", "GOALS", "REPLICATES", "Scale", "misses"]

FIGURES_ENV = "ORCH_GOAL_FIGURES"  # where a full run's tests leave their figures for the lock

Figures = dict
Check = Callable[[Figures, bool], list[str]]

# goal -> replicates (or seeds) in full and as a smoke check
REPLICATES = {
    "forecast_coverage": (1600, 40),
    "planted_gap": (400, 24),
    "huber": (100, 10),
    "joint_law": (400, 40),
    "verdict_rates": (300, 8),
    "sparse_verdicts": (300, 8),
    "orch_next": (60, 4),
}


def _within(name: str, value: float, low: float, high: float) -> list[str]:
    return [] if low <= value <= high else [f"{name} {value:.4g} outside [{low:g}, {high:g}]"]


def forecast_coverage(figures: Figures, smoke: bool) -> list[str]:
    """95% PIs at 4x, 12x and 30x past the data hold 93-97% of new means; the right law weighs
    most in at least 90% of curves."""
    low, high = (0.75, 1.0) if smoke else (0.93, 0.97)
    found = [
        m
        for ratio, share in figures["coverage"].items()
        for m in _within(f"coverage at {ratio}x", share, low, high)
    ]
    return found + _within("wrong law weighs most", figures["wrong_family"], 0.0, 0.3 if smoke else 0.10)


def planted_gap(figures: Figures, smoke: bool) -> list[str]:
    """A planted 42x: median within 5% (smoke 50%), 95% CIs cover it 93% of the time (smoke 75%),
    identifiable in 95% (smoke 75%), never wider than 100x while called identifiable."""
    return [
        *_within(
            "median ratio / 42", figures["median_ratio"] / 42, *((1 / 1.5, 1.5) if smoke else (0.95, 1.05))
        ),
        *_within("CI coverage", figures["coverage"], 0.75 if smoke else 0.93, 1.0),
        *_within("identifiable", figures["identifiable"], 0.75 if smoke else 0.95, 1.0),
        *_within("wide and identifiable", figures["wide_unflagged"], 0, 0),
    ]


def huber(figures: Figures, smoke: bool) -> list[str]:
    """One diverged seed moves a Huber fit by less than one standard error."""
    return _within("largest Huber shift (SE)", figures["largest_shift"], 0.0, 0.999999)


def joint_law(figures: Figures, smoke: bool) -> list[str]:
    """The joint law's PI holds the held-out largest model 93-97% of the time (smoke 75%)."""
    return _within("joint-law coverage", figures["coverage"], *((0.75, 1.0) if smoke else (0.93, 0.97)))


def verdict_rates(figures: Figures, smoke: bool) -> list[str]:
    """fits.planted.calibration.GOALS on the verdict counts; as a smoke check, a true claim is never
    contradicted and a false one never supported (a wrong verdict in a few replicates is a gross
    break), and the decided ones mostly decide right."""
    replicates, counts = figures["replicates"], figures["counts"]
    found = []
    for experiment, goals in VERDICT_GOALS.items():
        for verdict, side, goal in goals:
            share = counts.get(experiment, {}).get(verdict, 0) / replicates
            if smoke:
                side, goal = (">=", 0.5) if side == ">=" else ("<=", 0.0)
            if not (share >= goal if side == ">=" else share <= goal):
                found.append(f"{experiment}: {verdict} {share:.1%} (goal {side} {goal:.0%})")
    return found


def sparse_verdicts(figures: Figures, smoke: bool) -> list[str]:
    """On a paper reader's sparse designs (`fits.planted.sparse`), at most 5% wrong verdicts for
    each truth in each design (smoke: 25%, a gross break in a few replicates)."""
    replicates, counts = figures["replicates"], figures["counts"]
    most = 0.25 if smoke else WRONG_AT_MOST
    found = []
    for name, verdicts in counts.items():
        truth = name.rsplit(", ", 1)[1]
        found += _within(f"{name}: {WRONG[truth]}", verdicts.get(WRONG[truth], 0) / replicates, 0.0, most)
    return found if counts else ["no sparse design was judged"]


def orch_next(figures: Figures, smoke: bool) -> list[str]:
    """orch next's median interval width at most 0.8x the uniform grid's, 0.7x random picks' and
    0.7x cheapest-first picks', its intervals covering the planted gap (85% at 90% and 95%, at most
    5 points below uniform's), its verdicts right as often as uniform's, its spend within budget.
    As a smoke check: a closed interval, within budget, coverage at least half."""
    mine, budget = figures["orch next"], figures["budget"]
    found = _within("orch next's largest spend", mine["largest_flops"], 0.0, budget)
    if mine["median_width"] is None:
        return [*found, "orch next gives no closed interval in most replicates"]
    if smoke:
        return found + _within("orch next's coverage", mine["coverage"], 0.5, 1.0)
    # Against cheapest-first, 0.7x again since issue 45's planner, which plans a gap on the
    # estimator its verdict reads (0.705 against cheapest-first's 1.064 at 60 replicates; 0.752
    # under issue 43's, when this goal was 0.75x).
    for design, most in (("uniform grid", 0.8), ("random", 0.7), ("cheapest first", 0.7)):
        theirs = figures[design]["median_width"]
        if theirs is not None and mine["median_width"] > most * theirs:
            found.append(f"median width {mine['median_width']:.3f} over {most}x {design}'s {theirs:.3f}")
    uniform = figures["uniform grid"]
    return [
        *found,
        *_within("coverage at 95%", mine["coverage"], max(0.85, uniform["coverage"] - 0.05), 1.0),
        *_within("coverage at 90%", mine["coverage_90"], 0.85, 1.0),
        *_within("correct verdicts", mine["correct_share"], uniform["correct_share"], 1.0),
    ]


GOALS: dict[str, Check] = {
    "forecast_coverage": forecast_coverage,
    "planted_gap": planted_gap,
    "huber": huber,
    "joint_law": joint_law,
    "verdict_rates": verdict_rates,
    "sparse_verdicts": sparse_verdicts,
    "orch_next": orch_next,
}


def misses(goal: str, figures: Figures, smoke: bool = False) -> list[str]:
    """The goals `figures` miss, one line each (none: the goal is met)."""
    return GOALS[goal](figures, smoke)


@dataclass(frozen=True)
class Scale:
    """How a slow test runs its goal: in full (and its figures left for the lock) or as a smoke
    check (`pytest -m slow --goals smoke`)."""

    smoke: bool

    @classmethod
    def of(cls, config: Any) -> "Scale":
        """The scale pytest was asked for (`--goals full|smoke`, registered in tests/conftest.py)."""
        return cls(smoke=config.getoption("--goals") == "smoke")

    def replicates(self, goal: str) -> int:
        full, smoke = REPLICATES[goal]
        return smoke if self.smoke else full

    def check(self, goal: str, figures: Figures) -> None:
        """Assert the goal on what the test measured; a full run's figures go to the lock."""
        folder = os.environ.get(FIGURES_ENV)
        if folder and not self.smoke:
            (Path(folder) / f"{goal}.json").write_text(json.dumps(figures, sort_keys=True))
        missed = misses(goal, figures, self.smoke)
        assert not missed, "\n".join([f"{goal} ({'smoke' if self.smoke else 'full'}):", *missed])
