"""The slow goals, as checks of plain figures: each takes what its slow test measured (numbers in a
dict, as the goal lock stores them) and gives one `Row` a figure: its value, Monte-Carlo SE and
one-sided 95% bounds (`fits.planted.monte_carlo`), the goal, and whether it holds.

In full, a goal holds when its figure's bound clears it: the lower bound of a share that must be
high, the upper bound of one that must be low, both bounds of one that must lie in a window. A
figure a few replicates' fits can move (another machine's ninth digit) then moves its bound by as
little, and the goals are set where the bound clears them by a margin (in SEs) the lock prints.
As a smoke check (a few replicates) the value itself is held to loose bounds: a gross break,
not a calibration. The slow tests assert these; `tests.goal_lock` checks the figures the lock
recorded against the same functions, so a bound cannot differ between the test and the lock.
"""

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fits.planted.calibration import GOALS as VERDICT_GOALS
from fits.planted.monte_carlo import share
from fits.planted.sparse import WRONG, WRONG_AT_MOST

__all__ = ["FIGURES_ENV", "GOALS", "REPLICATES", "Row", "Scale", "misses", "rows"]

FIGURES_ENV = "ORCH_GOAL_FIGURES"  # where a full run's tests leave their figures for the lock

Figures = dict
Estimate = dict  # fits.planted.monte_carlo.Estimate.as_dict(): value, se, low, high, n

# goal -> replicates (or seeds) in full and as a smoke check
REPLICATES = {
    "forecast_coverage": (1600, 40),
    "planted_gap": (400, 24),
    "huber": (100, 10),
    "joint_law": (1600, 40),
    "verdict_rates": (200, 8),
    "sparse_verdicts": (200, 8),
    "orch_next": (60, 4),
}
SIMPLE_DESIGNS = ("uniform grid", "random", "cheapest first")  # what orch next is held against


@dataclass(frozen=True)
class Row:
    """One figure against its goal: `low`..`high` is what the checked number must lie in (the
    bounds in full, the value as a smoke check)."""

    figure: str
    estimate: Estimate
    low: float
    high: float
    smoke: bool

    @property
    def ok(self) -> bool:
        if self.smoke:
            return self.low <= self.estimate["value"] <= self.high
        return self.low <= self.estimate["low"] and self.estimate["high"] <= self.high

    @property
    def goal(self) -> str:
        if self.low == -math.inf:
            return f"at most {self.high:.4g}"
        if self.high == math.inf:
            return f"at least {self.low:.4g}"
        return f"within [{self.low:.4g}, {self.high:.4g}]"

    @property
    def margin(self) -> float:
        """How far the checked bounds lie inside the goal, in SEs (negative: outside)."""
        e = self.estimate
        checked = (e["value"], e["value"]) if self.smoke else (e["low"], e["high"])
        room = min(checked[0] - self.low, self.high - checked[1])
        if room == 0 or math.isinf(room):
            return room
        return room / e["se"] if e["se"] > 0 else math.copysign(math.inf, room)

    def line(self) -> str:
        e = self.estimate
        told = f"{e['value']:.4g} (SE {e['se']:.2g}; 95% bounds {e['low']:.4g}..{e['high']:.4g}; n {e['n']})"
        checked = "value" if self.smoke else "bounds"
        return f"{self.figure} {told}: goal {self.goal} on its {checked}, margin {self.margin:.2g} SE"


def _exact(value: float) -> Estimate:
    """A figure with no Monte-Carlo error (a count, a spend): its bounds are itself."""
    return {"value": value, "se": 0.0, "low": value, "high": value, "n": 1}


def _row(figure: str, estimate: Estimate, smoke: bool, full: tuple, smoke_goal: tuple) -> Row:
    low, high = smoke_goal if smoke else full
    return Row(figure, estimate, low, high, smoke)


def _least(goal: float) -> tuple[float, float]:
    return goal, math.inf


def _most(goal: float) -> tuple[float, float]:
    return -math.inf, goal


def forecast_coverage(figures: Figures, smoke: bool) -> list[Row]:
    """95% PIs at 4x, 12x and 30x past the data hold 92.5-97.5% of new means; the right law
    weighs most in at least 90% of curves."""
    found = [
        _row(f"coverage at {ratio}x", share, smoke, (0.925, 0.975), _least(0.75))
        for ratio, share in figures["coverage"].items()
    ]
    wrong = _row("wrong law weighs most", figures["wrong_family"], smoke, _most(0.10), _most(0.3))
    return [*found, wrong]


def planted_gap(figures: Figures, smoke: bool) -> list[Row]:
    """A planted 42x: median within 5% (smoke 50%), 95% CIs cover it 93% of the time (smoke 75%),
    identifiable in 95% (smoke 75%), never wider than 100x while called identifiable."""
    return [
        _row("median ratio", figures["median_ratio"], smoke, (0.95 * 42, 1.05 * 42), (28, 63)),
        _row("CI coverage", figures["coverage"], smoke, _least(0.93), _least(0.75)),
        _row("identifiable", figures["identifiable"], smoke, _least(0.95), _least(0.75)),
        _row("wide and identifiable", _exact(figures["wide_unflagged"]), smoke, _most(0), _most(0)),
    ]


def huber(figures: Figures, smoke: bool) -> list[Row]:
    """One diverged seed moves a Huber fit by less than one standard error, in 95% of seeds at
    least (smoke: 90% of a few)."""
    return [_row("seeds moved under 1 SE", figures["within_one_se"], smoke, _least(0.95), _least(0.9))]


def joint_law(figures: Figures, smoke: bool) -> list[Row]:
    """The joint law's PI holds the held-out largest model 91-99% of the time (smoke 75%)."""
    return [_row("joint-law coverage", figures["coverage"], smoke, (0.91, 0.99), _least(0.75))]


def verdict_rates(figures: Figures, smoke: bool) -> list[Row]:
    """fits.planted.calibration.GOALS on the verdict counts; as a smoke check, a true claim is never
    contradicted and a false one never supported (a wrong verdict in a few replicates is a gross
    break), and the decided ones mostly decide right."""
    replicates, counts = figures["replicates"], figures["counts"]
    found = []
    for experiment, goals in VERDICT_GOALS.items():
        for verdict, side, goal in goals:
            rate = share(counts.get(experiment, {}).get(verdict, 0), replicates).as_dict()
            full, loose = (_least(goal), _least(0.5)) if side == ">=" else (_most(goal), _most(0))
            found.append(_row(f"{experiment}: {verdict}", rate, smoke, full, loose))
    return found


def sparse_verdicts(figures: Figures, smoke: bool) -> list[Row]:
    """On a paper reader's sparse designs (`fits.planted.sparse`), at most 5% wrong verdicts for
    each truth in each design (smoke: 25%, a gross break in a few replicates)."""
    replicates, counts = figures["replicates"], figures["counts"]
    found = []
    for name, verdicts in counts.items():
        truth = name.rsplit(", ", 1)[1]
        wrong = share(verdicts.get(WRONG[truth], 0), replicates).as_dict()
        found.append(_row(f"{name}: {WRONG[truth]}", wrong, smoke, _most(WRONG_AT_MOST), _most(0.25)))
    return found


def orch_next(figures: Figures, smoke: bool) -> list[Row]:
    """Replicate by replicate against each simple design (the same truth and noise), orch next's
    final gap interval is the narrower in more replicates than it is the wider (a sign test: the
    share of the untied ones above half), and its verdict is right at most 5 points less often
    than the uniform grid's; its intervals cover the planted gap (85% at 95%, 80% at 90%); its
    spend stays within the budget. As a smoke check: within budget, coverage at least half."""
    spend = _row(
        "largest spend",
        _exact(figures["largest_flops"]),
        smoke,
        (0, figures["budget"]),
        (0, figures["budget"]),
    )
    coverage = _row("coverage at 95%", figures["coverage"], smoke, _least(0.85), _least(0.5))
    if smoke:
        return [spend, coverage]
    found = [spend, coverage, _row("coverage at 90%", figures["coverage_90"], smoke, _least(0.80), _least(0))]
    for design in SIMPLE_DESIGNS:
        against = figures["against"][design]
        found.append(_row(f"narrower than {design}", against["narrower"], smoke, _least(0.5), _least(0)))
    right = figures["against"]["uniform grid"]["correct_difference"]
    return [*found, _row("right - uniform grid's right", right, smoke, _least(-0.05), _least(-1))]


GOALS: dict[str, Callable[[Figures, bool], list[Row]]] = {
    "forecast_coverage": forecast_coverage,
    "planted_gap": planted_gap,
    "huber": huber,
    "joint_law": joint_law,
    "verdict_rates": verdict_rates,
    "sparse_verdicts": sparse_verdicts,
    "orch_next": orch_next,
}


def rows(goal: str, figures: Figures, smoke: bool = False) -> list[Row]:
    """Every figure of `goal` against its goal."""
    return GOALS[goal](figures, smoke)


def misses(goal: str, figures: Figures, smoke: bool = False) -> list[str]:
    """The goals `figures` miss, one line each (none: the goal is met)."""
    return [row.line() for row in rows(goal, figures, smoke) if not row.ok]


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
