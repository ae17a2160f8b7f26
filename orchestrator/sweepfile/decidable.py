"""Whether a sweep's design can decide each claim it states, before anything runs (`orch sweep
--dry-run`, `orch check --design`). A fault is something no outcome of the runs can get past:

- a claim's curve is not on the grid;
- a gap reads the slower curve's level at a size past its fitted sizes (a held-out or unrun
  size: the laws never see it), or the faster curve's claimed crossing lies outside its fitted
  sizes;
- a level, order or difference reads seed means where the design runs one seed (nothing
  measures the noise), or a level forecast past twice its curve's data (withheld);
- a forecast claim has so few held-out cells that even every one a hit leaves its
  Clopper-Pearson lower bound below the claimed share.

Each fault names its fix. Pure: the spec and the dry run's rows in, one `ClaimDesign` a claim out.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats

from fits.claims.claim import Claim, Kind
from fits.claims.common import SIZE_PRECISION
from fits.curve.level import LEVEL
from fits.curve.settings import Points
from foundation.sizes import format_size
from orchestrator.sweepfile import Spec, TrialConfig
from orchestrator.sweepfile.sources import rules_of

__all__ = ["ClaimDesign", "cells_needed", "check_design"]

FORECAST_REACH = 2.0  # a level past this many times a curve's largest fitted size is withheld


@dataclass(frozen=True)
class Fault:
    """What the design lacks for a claim, with its fix: `never`, no outcome of the runs can
    decide it; else it can be decided, on weaker evidence than the design could give."""

    what: str
    never: bool = True


@dataclass(frozen=True)
class ClaimDesign:
    claim: str
    kind: str
    faults: tuple[Fault, ...]
    runs: int  # the trials whose points the claim reads
    gpu_hours: float | None  # theirs (None: no trial asks for a GPU)
    elsewhere: str | None = None  # the eval set or reference it reads that this sweep does not score

    @property
    def decidable(self) -> bool:
        """No run can fail to decide it for want of design (noise may still leave it open)."""
        return not any(fault.never for fault in self.faults)


@dataclass(frozen=True)
class _Curve:
    """One (objective, model) of the design: its trials, and the sizes the fits see."""

    name: str
    trials: tuple[TrialConfig, ...]
    fitted: tuple[int, ...]  # sizes with a trial not held out, ascending
    seeds: dict[int, int]  # size -> trials run there, held out or not

    def seeds_at(self, samples: int) -> int:
        """The trials giving a point at `samples`, to the 3 digits a claim writes sizes in."""
        return sum(n for size, n in self.seeds.items() if abs(size / samples - 1) <= SIZE_PRECISION)


def check_design(spec: Spec, rows: Sequence[dict]) -> tuple[ClaimDesign, ...]:
    """Each of the spec's claims against its design; `rows`: the dry run's, for GPU-hours
    (`orchestrator.run.plan.plan`; none: no GPU-hours)."""
    hours = {row["key"]: row["gpu_hours_est"] for row in rows}
    return tuple(_check(claim, spec, hours) for claim in spec.claims)


def cells_needed(share: float, level: float = LEVEL) -> int:
    """The fewest held-out cells whose Clopper-Pearson lower bound, every cell a hit, reaches `share`."""
    if share <= 0:
        return 1
    return math.ceil(math.log((1 - level) / 2) / math.log(share))


def _check(claim: Claim, spec: Spec, hours: dict[str, float | None]) -> ClaimDesign:
    if (other := _elsewhere(claim, spec)) is not None:
        return ClaimDesign(claim.id, str(claim.kind), (), 0, None, other)
    if claim.kind is Kind.FORECAST:
        faults, trials = _forecast(claim, spec)
    else:
        curves = {name: _curve(spec, name, claim.model) for name in claim.objectives}
        absent = [name for name, curve in curves.items() if not curve.trials]
        if absent:
            model = claim.model or "any model"
            faults = [Fault(f"no runs of {name}/{model} on the grid: add them") for name in absent]
        else:
            faults = list(_faults(claim, curves, spec.holdout_above))
        trials = [t for curve in curves.values() for t in curve.trials]
    spent = [hours.get(t.key) for t in trials]
    gpu_hours = None if all(h is None for h in spent) else sum(h or 0.0 for h in spent)
    return ClaimDesign(claim.id, str(claim.kind), tuple(faults), len(trials), gpu_hours)


def _elsewhere(claim: Claim, spec: Spec) -> str | None:
    """Why the sweep does not score what the claim reads (None: it does; a metric it does not
    measure is refused with the file)."""
    if claim.eval_set is not None and claim.eval_set != spec.eval.set:
        return f"eval set {claim.eval_set}; this sweep evaluates on {spec.eval.set}"
    references = spec.eval.references or rules_of(spec.data).references(spec.data)
    if claim.reference is not None and claim.reference not in references:
        return f"reference {claim.reference}; this sweep scores against {', '.join(references)}"
    return None


def _curve(spec: Spec, objective: str, model: str | None) -> _Curve:
    """The claim's curve of `objective`: its model, else the first model by name, as a fit
    chooses it (`fits.curve.curveset.CurveSet.find`); its points as the design makes them."""
    trials = [t for t in spec.trials if t.objective == objective and (model is None or t.model == model)]
    if model is None and trials:
        first = min(t.model for t in trials)
        trials = [t for t in trials if t.model == first]
    name = f"{objective}/{trials[0].model if trials else model}"
    seeds: dict[int, int] = {}
    fitted: set[int] = set()
    for trial in trials:
        out = spec.is_held_out(trial)
        for size in _points(spec, trial):
            seeds[size] = seeds.get(size, 0) + 1
            if not out and (spec.holdout_above is None or size <= spec.holdout_above):
                fitted.add(size)
    return _Curve(name, tuple(trials), tuple(sorted(fitted)), seeds)


def _points(spec: Spec, trial: TrialConfig) -> list[int]:
    """The sizes a trial gives points at: every checkpoint where the design makes each one a
    point (a constant learning rate), else its end."""
    if spec.design is Points.ALL:
        return [size for size in trial.checkpoints if size > 0]
    return [trial.budget_samples]


def _faults(claim: Claim, curves: dict[str, _Curve], holdout_above: int | None):
    if claim.kind is Kind.GAP:
        yield from _gap(claim, curves[claim.faster], curves[claim.slower], holdout_above)
        return
    if claim.kind is Kind.LEVEL:
        yield from _level(claim, curves[claim.objective])
        return
    pair = (curves[claim.above], curves[claim.below])
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


def _gap(claim: Claim, faster: _Curve, slower: _Curve, holdout_above: int | None):
    if claim.at is None:
        return
    at, size = claim.at, format_size(claim.at)
    if not slower.fitted or slower.fitted[-1] < at * (1 - SIZE_PRECISION):
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
    region = claim.region
    middle = math.sqrt(region.low * region.high) if math.isfinite(region.high) else region.low
    if middle <= 0 or not faster.fitted:
        return
    crossing = at / middle
    if not faster.fitted[0] <= crossing <= faster.fitted[-1]:
        yield Fault(
            f"{faster.name} would reach that level near {format_size(crossing)} if the claim holds, "
            f"outside its fitted sizes ({format_size(faster.fitted[0])}..{format_size(faster.fitted[-1])}): "
            f"run {faster.name} there"
        )


def _level(claim: Claim, curve: _Curve):
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


def _seeds_at(curve: _Curve, at: int):
    count = curve.seeds_at(at)
    if count == 0:
        yield Fault(f"{curve.name} is not run at {format_size(at)}: run it there with 2 seeds at least")
    elif count == 1:
        yield Fault(
            f"one seed of {curve.name} at {format_size(at)}: nothing measures its noise; "
            "run 2 seeds there at least"
        )


def _forecast(claim: Claim, spec: Spec) -> tuple[list[Fault], list[TrialConfig]]:
    """A forecast claim's held-out cells, as a fit groups them: one per curve and held-out size
    (every checkpoint past `holdout.samples_above` where every checkpoint is a point)."""
    wanted = [
        t
        for t in spec.trials
        if (claim.objective is None or t.objective == claim.objective)
        and (claim.model is None or t.model == claim.model)
    ]
    above = spec.holdout_above
    cells, held = set(), []
    for trial in wanted:
        out = spec.is_held_out(trial)
        sizes = [s for s in _points(spec, trial) if out or (above is not None and s > above)]
        cells |= {(trial.objective, trial.model, size) for size in sizes}
        held += [trial] if sizes else []
    references = len(spec.eval.references or rules_of(spec.data).references(spec.data)) or 1
    count = len(cells) * (1 if claim.reference else references)
    needed = cells_needed(claim.region.low)
    if count >= needed:
        return [], held
    best = stats.beta.ppf((1 - LEVEL) / 2, count, 1) if count else 0.0
    return [
        Fault(
            f"{count} held-out cell{'s' * (count != 1)}: even all {count} within seed noise give a "
            f"Clopper-Pearson lower bound of {best:.3f}, below the claimed {claim.region.low:g}; hold "
            f"out {needed} cells at least (holdout: in the sweep file)"
        )
    ], held
