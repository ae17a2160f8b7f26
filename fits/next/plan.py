"""The runs that would settle open claims (`orch next`): candidate runs (`Cell`s) scored by how
much they are expected to narrow each claim's interval (`fits.next.beliefs`) per FLOP, and picked
greedily within a budget. The picks share one simulated truth per outcome, so each is scored
given the picks before it; the same seed gives the same plan.

Pure: the curve stage's `CurveSet`, the verdicts judged on it, the claims and the candidate
cells in, a frozen `Plan` out. What the picks so far do to each claim is an explicit value
(`Landed`) carried from pick to pick.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from fits.claims.claim import Claim, Outcome, Verdict
from fits.claims.common import measured_curve
from fits.claims.kinds import CATALOG
from fits.curve.curveset import CurveSet
from fits.curve.settings import FitSettings
from fits.next.beliefs import MIN_EFFECTIVE, belief_of, planned
from fits.next.needs import Need, needs_of
from fits.next.outlook import Cell, Landed, Outlook

__all__ = [
    "PLANNED_IN_REPORT",
    "SEEDS",
    "NextRun",
    "Pick",
    "Plan",
    "candidate_cells",
    "interval_width",
    "plan_runs",
    "top_runs",
]

SEEDS = (1, 2, 3)  # new seeds a candidate adds
SHOWN = 3  # the runs the report lists for each open claim
PLANNED_IN_REPORT = 10  # the open claims the report plans for, in the claims' order


@dataclass(frozen=True)
class NextRun:
    """One of the runs that would most narrow an open claim per FLOP (`fits.next.plan`), for the report."""

    claim: str
    objective: str
    model: str
    samples: float
    seeds: int
    flops: float  # samples where no FLOPs were recorded
    width_now: float  # the claim's interval width (ln high/low for a gap)
    width_after: float  # expected, after this run alone
    decided: float  # the chance the verdict is then supported or contradicted


@dataclass(frozen=True)
class Pick:
    cell: Cell
    outlooks: dict[str, Outlook]  # claim id -> after this pick and every one before it
    narrowing: float  # each claim's width reduction over the picks before it, relative to now, summed
    gain: float  # the narrowing per unit of the pick's cost (`_cost`)
    landed: dict[str, Landed]  # claim id -> this pick and every one before it, landed


@dataclass(frozen=True)
class Plan:
    claims: tuple[Claim, ...]  # the claims planned on how much runs narrow them
    now: dict[str, Outlook]  # claim id -> before any new run
    picks: tuple[Pick, ...] = ()  # greedy, in order
    ranked: tuple[Pick, ...] = ()  # every candidate alone, best first
    notes: tuple[str, ...] = ()
    measured: dict[str, float | None] = field(default_factory=dict)  # claim id -> its verdict's width
    needs: tuple[Need, ...] = ()  # what claims lack before they can be planned: run these first
    first: tuple[Cell, ...] = ()  # the picks that meet those needs, cheapest first, within the limits

    @property
    def flops(self) -> float:
        return sum(c.flops for c in self.first) + sum(p.cell.flops for p in self.picks)

    def expected(self, claim_id: str, outlook: Outlook) -> float:
        """The width the claim's verdict interval is expected to have: its width now times the
        planned narrowing (the planning mixture's interval is not the verdict's own)."""
        now, measured = self.now[claim_id].width, self.measured.get(claim_id)
        if measured is None or not np.isfinite(now) or now <= 0:
            return outlook.width
        return measured * outlook.width / now


def interval_width(claim: Claim, interval: tuple[float, float] | None) -> float | None:
    """ln(high / low) of a ratio's interval, high - low of any other; None when there is no
    closed interval."""
    return CATALOG[claim.kind].width_of(interval)


def plan_runs(
    claims: Sequence[Claim],
    curves: CurveSet,
    settings: FitSettings,
    verdicts: Sequence[Verdict],
    cells: Sequence[Cell],
    budget: float | None = None,
    runs: int | None = None,
    seed: int = 0,
) -> Plan:
    """Every cell scored alone (`ranked`, per FLOP), then picks made greedily, each the cell
    whose summed relative width reduction is largest given the picks before it, until `budget`
    FLOPs or `runs` runs are spent or no cell narrows any claim. The reduction is per unit of
    what the cell uses of the scarcer limit (`_cost`): per FLOP under a budget alone, per run
    under a run count alone (FLOPs unknown: samples)."""
    judged = {v.claim.id: v for v in verdicts}
    needs = [need for claim in claims for need in needs_of(claim, curves, cells, judged.get(claim.id))]
    first = _first_runs(needs, budget, runs)
    lacking = {need.claim for need in needs}
    claims = [claim for claim in claims if claim.id not in lacking]
    budget = None if budget is None else budget - sum(c.flops for c in first)
    runs = None if runs is None else runs - sum(c.seeds for c in first)
    beliefs = {claim.id: belief_of(claim, curves, settings, seed, judged.get(claim.id)) for claim in claims}
    nothing = {claim_id: belief.nothing() for claim_id, belief in beliefs.items()}
    now = {claim_id: belief.outlook(nothing[claim_id]) for claim_id, belief in beliefs.items()}
    measured = {c.id: interval_width(c, judged[c.id].interval) if c.id in judged else None for c in claims}
    notes = [f"{claim_id}: {note}" for claim_id, belief in beliefs.items() for note in belief.notes]
    ranked = sorted((_scored(beliefs, now, now, nothing, c, c.flops) for c in cells), key=lambda p: -p.gain)
    current, landed, picks = now, nothing, []
    while budget is not None or runs is not None:
        chosen = [pick.cell for pick in picks]
        spent, count = sum(c.flops for c in chosen), sum(c.seeds for c in chosen)
        affordable = [
            c
            for c in cells
            if (budget is None or spent + c.flops <= budget) and (runs is None or count + c.seeds <= runs)
        ]
        if not affordable:
            break
        scored = (_scored(beliefs, now, current, landed, c, _cost(c, budget, runs)) for c in affordable)
        best = max(scored, key=lambda p: p.gain)
        if best.gain <= 0:
            break
        current, landed = best.outlooks, best.landed
        picks.append(best)
    for claim_id, outlook in (picks[-1].outlooks if picks else {}).items():
        if outlook.effective is not None and outlook.effective < MIN_EFFECTIVE:
            notes.append(
                f"{claim_id}: after the picks {outlook.effective:.0f} of the draws carry the weight: "
                "the expected widths are rough; plan again once the first picks have landed"
            )
    return Plan(tuple(claims), now, tuple(picks), tuple(ranked), tuple(notes), measured, tuple(needs), first)


def _first_runs(needs: list[Need], budget: float | None, runs: int | None) -> tuple[Cell, ...]:
    """The first runs of each need's list, at as many distinct sizes as it takes, within the
    limits (a run meeting two needs counts once)."""
    chosen: list[Cell] = []
    for need in needs:
        met = {c.samples for c in need.cells if c in chosen}
        for cell in need.cells:
            if len(met) >= need.sizes:
                break
            if cell.samples in met:
                continue
            spent, count = sum(c.flops for c in chosen), sum(c.seeds for c in chosen)
            if (budget is None or spent + cell.flops <= budget) and (
                runs is None or count + cell.seeds <= runs
            ):
                chosen.append(cell)
                met.add(cell.samples)
    return tuple(chosen)


def _cost(cell: Cell, budget: float | None, runs: int | None) -> float:
    """What the cell uses of the scarcer limit: with both a budget and a run count, a run
    cheaper than its share of the budget costs one run's share, a dearer one its share of the
    FLOPs, so neither the cheapest runs nor the dearest win by cost alone."""
    if runs is None:
        return cell.flops
    if budget is None:
        return cell.seeds
    return max(cell.flops / budget, cell.seeds / runs)


def _scored(beliefs: dict, now: dict, current: dict, landed: dict, cell: Cell, cost: float) -> Pick:
    """The cell landed after the picks `landed` holds: each claim's outlook, and the gain over
    `current` per unit of `cost`, each claim's narrowing relative to its width now."""
    after = {claim_id: belief.land(landed[claim_id], cell) for claim_id, belief in beliefs.items()}
    outlooks = {claim_id: beliefs[claim_id].outlook(after[claim_id]) for claim_id in beliefs}
    narrowed = sum(
        (current[i].width - outlooks[i].width) / now[i].width
        for i in beliefs
        if np.isfinite(now[i].width) and now[i].width > 0
    )
    return Pick(cell, outlooks, narrowed, narrowed / cost, after)


def candidate_cells(
    curves: CurveSet,
    claims: Sequence[Claim],
    sizes: Sequence[int],
    corpus: int | None = None,
    per_sample: Mapping[tuple[str, str], float] | None = None,
) -> list[Cell]:
    """Every (objective, model, data size, seeds) a claim's curves could add: `sizes` (the
    sweep's data sizes; where none are given, every size the claim's curves measured and its
    `at`) and one octave beyond each end, 1 to 3 new seeds, none past `corpus` (the samples
    one epoch of the training text holds: more would repeat it). FLOPs from the store's FLOPs
    per sample, else `per_sample` (a sweep file's FLOPs model), else samples."""
    cells = {}
    for claim in claims:
        seen = [measured_curve(curves, claim, objective) for objective in claim.objectives]
        measured = {int(s) for curve in seen if curve is not None for s in curve.seen.samples}
        axis = sorted(sizes or measured | ({int(claim.at)} if claim.at is not None else set()))
        for objective, curve in zip(claim.objectives, seen, strict=True):
            if curve is None:
                continue
            model = curve.key.model
            key = (objective, model)
            cost = curves.flops_per_sample.get(key) or (per_sample or {}).get(key)
            for samples in [axis[0] // 2, *axis, axis[-1] * 2]:
                if corpus is not None and samples > corpus:
                    continue
                for seeds in SEEDS:
                    cells[(objective, model, samples, seeds)] = Cell(
                        objective, model, float(samples), seeds, (cost or 1.0) * samples * seeds
                    )
    return list(cells.values())


def top_runs(
    curves: CurveSet,
    settings: FitSettings,
    verdicts: Sequence[Verdict],
    sizes: Sequence[int],
    count: int = SHOWN,
) -> tuple[NextRun, ...]:
    """For each of the first PLANNED_IN_REPORT inconclusive claims these curves can plan, the
    `count` candidates that narrow it most per FLOP alone, with the width they are expected to
    leave (the report's table; `orch next` plans every claim)."""
    rows: list[NextRun] = []
    plannable = [
        verdict.claim
        for verdict in verdicts
        if verdict.verdict is Outcome.INCONCLUSIVE
        and planned(verdict.claim)
        and all(measured_curve(curves, verdict.claim, name) is not None for name in verdict.claim.objectives)
    ]
    for claim in plannable[:PLANNED_IN_REPORT]:
        cells = candidate_cells(curves, [claim], sizes)
        plan = plan_runs([claim], curves, settings, verdicts, cells)
        if plan.needs:  # what it lacks first: no width can be forecast before these land
            rows += [_run(claim.id, cell, math.inf, math.inf, 0.0) for cell in plan.first]
            continue
        now = plan.expected(claim.id, plan.now[claim.id])
        for pick in plan.ranked[:count]:
            outlook = pick.outlooks[claim.id]
            rows.append(_run(claim.id, pick.cell, now, plan.expected(claim.id, outlook), outlook.decided))
    return tuple(rows)


def _run(claim_id: str, cell: Cell, now: float, after: float, decided: float) -> NextRun:
    return NextRun(
        claim_id, cell.objective, cell.model, cell.samples, cell.seeds, cell.flops, now, after, decided
    )
