"""What a claim needs before any run can be planned on how much it narrows: a noise estimate for
a measured point that has one seed and no SE (a second seed there gives one), a size both
objectives of a difference measured (one at the other's sizes), or a law for a curve that has
none (more sizes, all of them at once, nearest the sizes measured). No noise is ever assumed,
so no width can be forecast for such a claim; the planner lists these runs first and plans the
rest once they land."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fits.claims.claim import Claim, Per, Verdict
from fits.claims.common import SIZE_PRECISION, measured_at, measured_curve
from fits.claims.gap import flops_scale, reads_seed_means
from fits.claims.kinds import CATALOG, Estimator
from fits.curve.curveset import CurveSet, Unfitted
from fits.curve.laws import LAWS
from fits.curve.measured_gap import noise_measured
from fits.next.outlook import Cell
from foundation.sizes import format_size

__all__ = ["Need", "needs_of"]

FEWEST = min(len(law.params) for law in LAWS.values()) + 1  # sizes the simplest law needs


@dataclass(frozen=True)
class Need:
    claim: str  # the claim's id
    what: str  # in words: what is missing
    cells: tuple[Cell, ...]  # the candidate runs that would supply it, the first best
    sizes: int = 1  # how many of them, at distinct sizes, supply it (a law: the sizes it lacks)


def needs_of(
    claim: Claim, curves: CurveSet, cells: Sequence[Cell], verdict: Verdict | None = None
) -> list[Need]:
    """What the claim lacks before its interval can be planned on (none: plan it), for the
    estimator its verdict reads (`verdict`: the seed means' gap, where the laws' is withheld)."""
    if claim.per is Per.FLOPS and not _flops_known(claim, curves):
        return [Need(claim.id, "FLOPs per sample of both objectives (an import's flops column)", ())]
    if verdict is not None and reads_seed_means(verdict):
        return _means_gap_needs(claim, curves, cells)
    found: list[Need] = []
    for objective in claim.objectives:
        curve = measured_curve(curves, claim, objective)
        if curve is None:  # no candidate run: orch knows no model or size of it here
            found.append(Need(claim.id, f"runs of {objective} as the claim states them (not measured)", ()))
            continue
        mine = [c for c in cells if (c.objective, c.model) == (objective, curve.key.model)]
        for samples in _points_read(claim, curve):
            point = measured_at(curve, samples)
            if point is not None and point.se is None:
                at = [c for c in mine if np.isclose(c.samples, samples, rtol=SIZE_PRECISION)]
                what = f"a noise estimate for {point.name} at {format_size(samples)}"
                found.append(Need(claim.id, what, _cheapest(at)))
        if isinstance(curve, Unfitted) and not _reads_means(claim, curve):
            known = curve.seen.samples
            new = [c for c in mine if not np.isclose(known, c.samples, rtol=SIZE_PRECISION).any()]
            more = max(FEWEST - len(known), 1)
            what = (
                f"a law for {objective}/{curve.key.model}: {more} more size{'s' if more > 1 else ''} at least"
            )
            found.append(Need(claim.id, what, _nearest(new, known), more))
    return found + _shared_size(claim, curves, cells)


def _flops_known(claim: Claim, curves: CurveSet) -> bool:
    pair = [measured_curve(curves, claim, name) for name in (claim.faster, claim.slower)]
    return None in pair or flops_scale(curves, claim, *pair) is not None


def _means_gap_needs(claim: Claim, curves: CurveSet, cells: Sequence[Cell]) -> list[Need]:
    """The seed means' gap has an interval once the seeds of both curves measure their noise
    (`fits.curve.measured_gap.noise_measured`): for a curve whose seeds do not, a second seed at
    one of its measured sizes, the cheapest first (its scatter is pooled over the curve)."""
    found = []
    for objective in (claim.faster, claim.slower):
        curve = measured_curve(curves, claim, objective)
        points = curve.seen
        if noise_measured(points):
            continue
        lone = points.samples[points.seeds < 2]
        at = [
            c
            for c in cells
            if (c.objective, c.model) == (objective, curve.key.model)
            and np.isclose(lone, c.samples, rtol=SIZE_PRECISION).any()
        ]
        name = f"{objective}/{curve.key.model}"
        what = f"a second seed of {name} at one of its sizes (the seed means' gap pools its noise)"
        found.append(Need(claim.id, what, _cheapest(at)))
    return found


def _shared_size(claim: Claim, curves: CurveSet, cells: Sequence[Cell]) -> list[Need]:
    """A difference of means (an order, a difference) reads sizes both objectives measured: its
    `at`, or any one. Where there is none, runs of each at the other's sizes supply one."""
    if CATALOG[claim.kind].estimator is not Estimator.MEANS:
        return []
    pair = [measured_curve(curves, claim, name) for name in (claim.above, claim.below)]
    if any(curve is None for curve in pair):
        return []  # named above: not measured
    sizes = [curve.seen.samples for curve in pair]
    if claim.at is not None:
        wanted = [np.array([claim.at])] * 2
        shared = all(np.isclose(s, claim.at, rtol=SIZE_PRECISION).any() for s in sizes)
    else:
        wanted = [sizes[1], sizes[0]]
        shared = any(np.isclose(sizes[1], size, rtol=SIZE_PRECISION).any() for size in sizes[0])
    if shared:
        return []
    runs = [
        c
        for curve, at in zip(pair, wanted, strict=True)
        for c in cells
        if (c.objective, c.model) == (curve.key.objective, curve.key.model)
        and np.isclose(at, c.samples, rtol=SIZE_PRECISION).any()
        and not np.isclose(curve.seen.samples, c.samples, rtol=SIZE_PRECISION).any()
    ]
    where = f"at {format_size(claim.at)}" if claim.at is not None else "at one size"
    return [Need(claim.id, f"{claim.above} and {claim.below} measured {where}", _cheapest(runs))]


def _reads_means(claim: Claim, curve) -> bool:
    """Whether the claim's estimate is the curve's measured means (not its laws)."""
    estimator = CATALOG[claim.kind].estimator
    measured = claim.at is not None and measured_at(curve, claim.at) is not None
    return estimator is Estimator.MEANS or (estimator is Estimator.MEANS_WHERE_MEASURED and measured)


def _points_read(claim: Claim, curve) -> list[float]:
    """The measured sizes whose noise the claim's estimate needs: those its means read (its
    `at`, or every size for an order without one); for a curve without a law, the checkpoints a
    bound would read; none where laws carry the estimate (their residuals measure the noise)."""
    if not _reads_means(claim, curve) and not isinstance(curve, Unfitted):
        return []
    if claim.at is not None and measured_at(curve, claim.at) is not None:
        return [claim.at]
    if claim.at is not None and CATALOG[claim.kind].estimator is Estimator.MEANS:
        return []  # an order or a difference at a size not measured: `_shared_size` asks for it first
    return [float(s) for s in curve.seen.samples]


def _nearest(cells: list[Cell], known: np.ndarray) -> tuple[Cell, ...]:
    """One seed at each size, nearest (in octaves) to those measured first, the cheaper first
    among equals: a law is wanted where the curve was read, and the cheapest sizes (far below)
    buy a law of another part of the curve, halved again round after round."""

    def octaves(cell: Cell) -> int:
        return int(np.rint(np.min(np.abs(np.log2(cell.samples / known)))))

    return tuple(sorted((c for c in cells if c.seeds == 1), key=lambda c: (octaves(c), c.flops)))


def _cheapest(cells: list[Cell]) -> tuple[Cell, ...]:
    return tuple(sorted(cells, key=lambda c: (c.flops, c.seeds)))
