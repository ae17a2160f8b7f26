"""The claims of a sweep judged on what its store holds, as `orch check`, `orch next`, `orch fit`,
`orch status --watch` and `orch sweep --until-decided` all need them: the sweep's design and
claims read from its recorded file, the claims judged (`fits.run.fit_run.check_claims`), and the
open ones a planner takes."""

from pathlib import Path
from typing import Any

from db import Store
from orchestrator.cli.common import say
from orchestrator.cli.plan_text import interval
from orchestrator.errors import InputError

__all__ = ["claim_runs", "claims_and_sweep", "open_claims", "sweep_design"]


def sweep_design(store: Store, sweep: str, metric: str, claims_file: str | None = None) -> tuple[Any, Any]:
    """(design, claims) of the sweep as the store recorded it (`orchestrator.sweepfile.design`)."""
    from orchestrator.sweepfile.design import Recorded
    from orchestrator.sweepfile.design import sweep_design as design_of

    row = store.find_sweep(sweep)
    recorded = Recorded(sweep, store.url, row.spec_text, row.source)
    return design_of(recorded, [name for name, _ in store.measured(sweep)], metric, claims_file, say)


def claim_runs(
    store: Any, sweep_name: str, design: Any, claims: Any, command: str = "check", **options: Any
) -> Any:
    """The claims judged (`fits.run.fit_run.check_claims`; `options`: the fits' `FitOptions`); a
    sweep with no claims is an InputError."""
    from fits.curve.settings import FitOptions
    from fits.run.fit_run import check_claims

    if not claims:
        raise InputError(
            f"sweep {sweep_name} states no claims: give a claims file "
            f"(orch {command} CLAIMS.yaml {sweep_name}), "
            "or name one in the sweep file (claims: FILE)"
        )
    return check_claims(store, sweep_name, FitOptions(**options), design, claims)


def claims_and_sweep(targets: tuple[str, ...], command: str) -> tuple[str | None, str | None]:
    """(claims file, sweep name): a target ending in .yaml or .yml is the claims file."""
    files = [t for t in targets if Path(t).suffix in (".yaml", ".yml")]
    names = [t for t in targets if t not in files]
    if len(files) > 1 or len(names) > 1:
        raise InputError(
            f"orch {command} takes one claims file and one sweep name at most (got {', '.join(targets)})"
        )
    return (files[0] if files else None), (names[0] if names else None)


def open_claims(fits: list[Any], claim_ids: tuple[str, ...]) -> tuple[list[tuple[Any, list]], list[str]]:
    """([(fit run, its claims to plan)], what to say of the claims left out: a named claim
    already decided, a forecast claim (settled by held-out runs), or no open claim at all)."""
    from fits.claims.claim import Outcome
    from fits.claims.kinds import CATALOG, Estimator
    from fits.next.beliefs import planned

    plans, words = [], []
    for run in fits:
        chosen = []
        for verdict in run.verdicts:
            claim = verdict.claim
            if claim_ids and claim.id not in claim_ids:
                continue
            if verdict.verdict is not Outcome.INCONCLUSIVE:
                if claim_ids:
                    why = f"{verdict.verdict} ({interval(verdict)})"
                    words.append(f"claim {claim.id} is already {why}: nothing to plan")
            elif CATALOG[claim.kind].estimator is Estimator.NONE:
                words.append(f"claim {claim.id} ({claim.kind}): settled by held-out runs, not planned here")
            elif not planned(claim):
                words.append(f"claim {claim.id} (a level against {claim.baseline}): not planned here yet")
            else:
                chosen.append(claim)
        if chosen:
            plans.append((run, chosen))
    if not plans and not claim_ids:
        words.append("no claim is inconclusive: nothing to plan")
    return plans, words
