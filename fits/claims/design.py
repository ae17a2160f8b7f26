"""What a sweep's design lacks to decide a claim, before anything runs: each kind's design rule,
held by its catalog entry (`fits.claims.kinds`), on a `Design` the sweep file was read into
(`orchestrator.sweepfile.decidable`). A fault is something no outcome of the runs can get past:

- a claim's curve is not on the grid (said before any rule runs);
- a gap reads the slower curve's level at a size past its fitted sizes (a held-out or unrun
  size: the laws never see it), or the faster curve's claimed crossing lies outside its fitted
  sizes;
- a level, order or difference reads seed means where the design runs one seed (nothing
  measures the noise), or a level forecast past twice its curve's data (withheld);
- a forecast claim has so few held-out cells that even every one a hit leaves its
  Clopper-Pearson lower bound below the claimed share.

Each fault names its fix. Pure: sizes and counts in, faults out.
"""

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from scipy import stats

from fits.claims.claim import Claim
from fits.claims.common import SIZE_PRECISION
from fits.curve.level import LEVEL
from foundation.sizes import format_size

__all__ = [
    "Design",
    "DesignCurve",
    "DesignRule",
    "Fault",
    "cells_needed",
    "forecast_faults",
    "gap_faults",
    "level_faults",
    "pair_faults",
]

FORECAST_REACH = 2.0  # a level past this many times a curve's largest fitted size is withheld


@dataclass(frozen=True)
class Fault:
    """What the design lacks for a claim, with its fix: `never`, no outcome of the runs can
    decide it; else it can be decided, on weaker evidence than the design could give."""

    what: str
    never: bool = True


@dataclass(frozen=True)
class DesignCurve:
    """One (objective, model) of the design: the sizes its fits see and its trials at each size."""

    name: str
    fitted: tuple[int, ...]  # sizes with a trial not held out, ascending
    seeds: dict[int, int]  # size -> trials run there, held out or not

    def seeds_at(self, samples: int) -> int:
        """The trials giving a point at `samples`, to the 3 digits a claim writes sizes in."""
        return sum(n for size, n in self.seeds.items() if abs(size / samples - 1) <= SIZE_PRECISION)


@dataclass(frozen=True)
class Design:
    """What a claim's design rule reads: its objectives' curves, the holdout past a size, and
    the held-out cells a forecast claim would be scored on (each cell once per reference)."""

    curves: dict[str, DesignCurve]
    holdout_above: int | None
    held_out_cells: int


DesignRule = Callable[[Claim, Design], Iterator[Fault]]


def cells_needed(share: float, level: float = LEVEL) -> int:
    """The fewest held-out cells whose Clopper-Pearson lower bound, every cell a hit, reaches `share`."""
    if share <= 0:
        return 1
    return math.ceil(math.log((1 - level) / 2) / math.log(share))


def gap_faults(claim: Claim, design: Design) -> Iterator[Fault]:
    faster, slower = design.curves[claim.faster], design.curves[claim.slower]
    if claim.at is None:
        return
    yield from _level_read(claim.at, faster, slower, design.holdout_above)
    region = claim.region
    middle = math.sqrt(region.low * region.high) if math.isfinite(region.high) else region.low
    if middle <= 0 or not faster.fitted:
        return
    crossing = claim.at / middle
    if not faster.fitted[0] <= crossing <= faster.fitted[-1]:
        yield Fault(
            f"{faster.name} would reach that level near {format_size(crossing)} if the claim holds, "
            f"outside its fitted sizes ({format_size(faster.fitted[0])}..{format_size(faster.fitted[-1])}): "
            f"run {faster.name} there"
        )


def _level_read(at: int, faster: DesignCurve, slower: DesignCurve, holdout_above: int | None):
    """The slower curve's level at `at` outside its fitted sizes: the laws never see it."""
    size = format_size(at)
    if slower.fitted and slower.fitted[-1] >= at * (1 - SIZE_PRECISION):
        return
    largest = format_size(slower.fitted[-1]) if slower.fitted else "none"
    if slower.seeds_at(at) == 0:
        why, fix = "", f"run and fit {size} for {slower.name}"
    elif holdout_above is not None and at > holdout_above:
        why = f"; past holdout.samples_above {format_size(holdout_above)}"
        fix = f"raise holdout.samples_above to {size} (the forecast claim then has fewer cells)"
    else:
        why, fix = f"; {size} is held out", f"take {size} out of holdout for {slower.name}"
    means = slower.seeds_at(at) >= 2 and max(faster.seeds.values()) >= 2
    withheld = "the laws' gap is withheld" + (", and only the seed means can read it" if means else "")
    yield Fault(
        f"the gap reads {slower.name}'s level at {size}, outside its fitted sizes (largest "
        f"{largest}{why}): {withheld}; {fix}",
        never=not means,
    )


def level_faults(claim: Claim, design: Design) -> Iterator[Fault]:
    curve = design.curves[claim.objective]
    if curve.seeds_at(claim.at):  # the seed means
        yield from _seeds_at(curve, claim.at)
        return
    reach = curve.fitted[-1] * FORECAST_REACH if curve.fitted else 0
    if claim.at > reach:
        yield Fault(
            f"{curve.name} is not run at {format_size(claim.at)}, and a law's forecast past "
            f"{FORECAST_REACH:g}x its largest fitted size is withheld: run {curve.name} at "
            f"{format_size(claim.at)} with 2 seeds"
        )


def pair_faults(claim: Claim, design: Design) -> Iterator[Fault]:
    """An order or a difference: seed means of both curves, at `at` or at a size both share."""
    pair = (design.curves[claim.above], design.curves[claim.below])
    if claim.at is not None:
        for curve in pair:
            yield from _seeds_at(curve, claim.at)
        return
    shared = set(pair[0].seeds) & set(pair[1].seeds)
    if not shared:
        yield Fault(f"{pair[0].name} and {pair[1].name} share no size: run both at one size at least")
    elif not any(min(pair[0].seeds[s], pair[1].seeds[s]) >= 2 for s in shared):
        yield Fault(
            f"one seed at every size {pair[0].name} and {pair[1].name} share: nothing measures the "
            "noise of their difference; run 2 seeds of each at one shared size at least"
        )


def _seeds_at(curve: DesignCurve, at: int) -> Iterator[Fault]:
    count = curve.seeds_at(at)
    if count == 0:
        yield Fault(f"{curve.name} is not run at {format_size(at)}: run it there with 2 seeds at least")
    elif count == 1:
        yield Fault(
            f"one seed of {curve.name} at {format_size(at)}: nothing measures its noise; "
            "run 2 seeds there at least"
        )


def forecast_faults(claim: Claim, design: Design) -> Iterator[Fault]:
    count, needed = design.held_out_cells, cells_needed(claim.region.low)
    if count >= needed:
        return
    best = stats.beta.ppf((1 - LEVEL) / 2, count, 1) if count else 0.0
    yield Fault(
        f"{count} held-out cell{'s' * (count != 1)}: even all {count} within seed noise give a "
        f"Clopper-Pearson lower bound of {best:.3f}, below the claimed {claim.region.low:g}; hold "
        f"out {needed} cells at least (holdout: in the sweep file)"
    )
