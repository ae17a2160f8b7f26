"""Whether a sweep's design can decide each claim it states, before anything runs (`orch sweep
--dry-run`, `orch check --design`): the sweep file read into a `fits.claims.design.Design` (its
curves' fitted sizes and seeds, its holdout, its held-out cells), and each claim held to its
kind's design rule from the catalog (`fits.claims.kinds`). A curve the grid lacks is said here,
for every kind alike. Pure: the spec and the dry run's rows in, one `ClaimDesign` a claim out.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from fits.claims.claim import Claim
from fits.claims.design import Design, DesignCurve, Fault
from fits.claims.kinds import CATALOG, Estimator
from fits.curve.settings import Points
from orchestrator.sweepfile import Spec, TrialConfig
from orchestrator.sweepfile.sources import rules_of

__all__ = ["ClaimDesign", "check_design"]


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


def check_design(spec: Spec, rows: Sequence[dict]) -> tuple[ClaimDesign, ...]:
    """Each of the spec's claims against its design; `rows`: the dry run's, for GPU-hours
    (`orchestrator.run.plan.plan`; none: no GPU-hours)."""
    hours = {row["key"]: row["gpu_hours_est"] for row in rows}
    return tuple(_check(claim, spec, hours) for claim in spec.claims)


def _check(claim: Claim, spec: Spec, hours: dict[str, float | None]) -> ClaimDesign:
    if (other := _elsewhere(claim, spec)) is not None:
        return ClaimDesign(claim.id, str(claim.kind), (), 0, None, other)
    entry = CATALOG[claim.kind]
    curves = {name: _curve(spec, name, claim.model) for name in claim.objectives}
    held_cells, held_trials = _held_out(claim, spec)
    absent = [name for name, (curve, trials) in curves.items() if not trials]
    if absent:
        model = claim.model or "any model"
        faults = [Fault(f"no runs of {name}/{model} on the grid: add them") for name in absent]
    else:
        design = Design({name: curve for name, (curve, _) in curves.items()}, spec.holdout_above, held_cells)
        faults = list(entry.design(claim, design))
    # a claim settled by held-out runs reads those; any other, its curves' trials
    if entry.estimator is Estimator.NONE:
        trials = held_trials
    else:
        trials = [t for _, curve_trials in curves.values() for t in curve_trials]
    spent = [hours.get(t.key) for t in trials]
    gpu_hours = None if all(h is None for h in spent) else sum(h or 0.0 for h in spent)
    return ClaimDesign(claim.id, str(claim.kind), tuple(faults), len(trials), gpu_hours)


def _elsewhere(claim: Claim, spec: Spec) -> str | None:
    """Why the sweep does not score what the claim reads (None: it does; a metric it does not
    measure is refused with the file)."""
    if claim.eval_set is not None and claim.eval_set != spec.eval.set:
        return f"eval set {claim.eval_set}; this sweep evaluates on {spec.eval.set}"
    references = _references(spec)
    if claim.reference is not None and claim.reference not in references:
        return f"reference {claim.reference}; this sweep scores against {', '.join(references)}"
    return None


def _references(spec: Spec) -> list[str]:
    return spec.eval.references or rules_of(spec.data).references(spec.data)


def _curve(spec: Spec, objective: str, model: str | None) -> tuple[DesignCurve, list[TrialConfig]]:
    """The claim's curve of `objective`, and its trials: its model, else the first model by name,
    as a fit chooses it (`fits.curve.curveset.CurveSet.find`); its points as the design makes them."""
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
    return DesignCurve(name, tuple(sorted(fitted)), seeds), trials


def _points(spec: Spec, trial: TrialConfig) -> list[int]:
    """The sizes a trial gives points at: every checkpoint where the design makes each one a
    point (a constant learning rate), else its end."""
    if spec.design is Points.ALL:
        return [size for size in trial.checkpoints if size > 0]
    return [trial.budget_samples]


def _held_out(claim: Claim, spec: Spec) -> tuple[int, list[TrialConfig]]:
    """The held-out cells a forecast claim on `claim`'s objective and model is scored on, as a
    fit groups them (one per curve and held-out size, every checkpoint past
    `holdout.samples_above` where every checkpoint is a point; each once per reference the claim
    reads), and the trials that give them."""
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
    return len(cells) * (1 if claim.reference else len(_references(spec)) or 1), held
