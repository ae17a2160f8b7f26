"""`orch next`: the runs that would settle the open claims, ranked by what they buy per FLOP
(`fits.next.plan`), and optionally written as a sweep file whose `include:` holds the picks.

The candidates are the claims' objectives on their curves' model, at every data size of the
sweep's grid and one octave beyond each end, with 1 to 3 new seeds."""

from pathlib import Path
from typing import Any

import click

from foundation.errors import did_you_mean
from foundation.sizes import format_size
from orchestrator.cli.check import DEFAULT_METRIC, claim_runs, claims_and_sweep
from orchestrator.cli.common import (
    FiniteRange,
    claims_targets,
    emit_json,
    json_option,
    open_sweep,
    say,
    store_option,
)
from orchestrator.cli.group import cli
from orchestrator.cli.heartbeat import doing, working
from orchestrator.cli.results import sweep_design
from orchestrator.errors import InputError

__all__ = ["next_runs"]

SHOWN = 10  # candidates listed per plan


@cli.command(name="next")
@claims_targets
@click.option(
    "--claim", "claim_ids", multiple=True, help="Plan for this claim (default: every inconclusive one)."
)
@click.option(
    "--budget",
    type=FiniteRange(min=0, min_open=True),
    default=None,
    help="FLOPs to spend on the picks (with --runs: at most that many runs within it).",
)
@click.option(
    "--runs", type=click.IntRange(min=1), default=None, help="Runs to pick (default 4, without --budget)."
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=0, show_default=True, help="The simulated outcomes' seed."
)
@click.option(
    "--write",
    "write_to",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the picks as a sweep file.",
)
@json_option
@store_option
@click.pass_context
@working
def next_runs(
    ctx: click.Context,
    targets: tuple[str, ...],
    claim_ids: tuple[str, ...],
    budget: float | None,
    runs: int | None,
    seed: int,
    write_to: str | None,
    as_json: bool,
) -> None:
    """Rank the runs that would settle the open claims: each candidate's FLOPs, the expected
    width of each claim's interval after it lands, and the chance the verdict is then decided;
    then pick greedily within --budget FLOPs, --runs runs or both (each pick the most narrowing
    per share of the scarcer limit).

    \b
        orch next                                    # the newest sweep's inconclusive claims
        orch next --runs 4 --write more.yaml         # then: orch sweep more.yaml
        orch next sweeps/claims/jepa_prh.yaml goodview_vs_ntp_paper --claim gap_42x --budget 1e18
    """
    from fits.next.plan import candidate_cells, plan_runs

    claims_file, sweep_name = claims_and_sweep(targets, "next")
    store, sweep_name = open_sweep(ctx, sweep_name)
    design, stated = sweep_design(store, sweep_name, DEFAULT_METRIC, claims_file)
    _check_ids(claim_ids, stated)
    # the planner runs once, here: the fits behind the verdicts plan nothing
    doing(f"fitting sweep {sweep_name}'s curves and judging its {len(stated)} claims")
    checked = claim_runs(store, sweep_name, design, stated, command="next", detail=False, next_runs=False)
    open_claims, words = _open_claims(checked.runs, claim_ids)
    candidates = [
        (run, claims, candidate_cells(run.curves, claims, design.grid.get("data_size", ())))
        for run, claims in open_claims
    ]
    _check_budget(budget, candidates)  # every bad input is said before anything else
    for line in words:
        say(line)
    if not candidates:
        if as_json:
            emit_json({"sweep": sweep_name, "plans": []})
        return
    runs = 4 if budget is None and runs is None else runs
    doing(
        f"planning: simulating what each of {sum(len(c) for *_, c in candidates)} candidate runs would tell"
    )
    plans = [
        (run, plan_runs(claims, run.curves, run.options, run.verdicts, cells, budget, runs, seed))
        for run, claims, cells in candidates
    ]
    if write_to is not None:
        _write(
            write_to,
            store,
            sweep_name,
            [c for _, plan in plans for c in (*plan.first, *(p.cell for p in plan.picks))],
        )
    if as_json:
        emit_json({"sweep": sweep_name, "plans": [_as_dict(run, plan) for run, plan in plans]})
    else:
        click.echo("\n\n".join(_text(run, plan) for run, plan in plans))
    if write_to is not None:
        say(f"wrote {write_to}: run the picks with 'orch sweep {write_to}', then 'orch check'")


def _check_budget(budget: float | None, candidates: list[tuple[Any, Any, list]]) -> None:
    """A budget below every plan's cheapest candidate run buys nothing: one line saying so."""
    for run, _, cells in candidates:
        cheapest = min(cells, key=lambda c: c.flops, default=None)
        if cheapest is not None and budget is not None and budget < cheapest.flops:
            raise InputError(
                f"--budget {budget:.3g} is below the cheapest candidate run ({cheapest.flops:.3g} "
                f"{_unit(run)}: {cheapest.objective} at {format_size(cheapest.samples)}); raise it"
            )


def _check_ids(claim_ids: tuple[str, ...], claims: Any) -> None:
    known = [claim.id for claim in claims]
    for claim_id in claim_ids:
        if claim_id not in known:
            raise InputError(
                f"{claims.source}: no claim {claim_id!r}{did_you_mean(claim_id, known)} "
                f"(claims: {', '.join(known)})"
            )


def _open_claims(fits: list[Any], claim_ids: tuple[str, ...]) -> tuple[list[tuple[Any, list]], list[str]]:
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
                    why = f"{verdict.verdict} ({_interval(verdict)})"
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


def _unit(run: Any) -> str:
    return "FLOPs" if run.flops_per_sample else "samples (no FLOPs recorded)"


def _interval(verdict: Any) -> str:
    """The verdict's value and interval as `orch check` shows them ('-' for what it lacks)."""
    from fits.report.claims import verdict_interval

    return f"{'-' if verdict.value is None else f'{verdict.value:.4g}'} {verdict_interval(verdict)}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _text(run: Any, plan: Any) -> str:
    from fits.report.claims import width_text
    from fits.report.text import render_table

    lines = [_needs_text(plan)] if plan.needs else []
    if not plan.claims:  # every claim lacks something first: nothing to rank yet
        return "\n".join(lines)
    verdicts = {v.claim.id: v for v in run.verdicts}
    for claim in plan.claims:
        now = plan.now[claim.id]
        lines.append(
            f"claim {claim.id} ({claim.kind}): {verdicts[claim.id].verdict}, "
            f"{_interval(verdicts[claim.id])}; "
            f"95% width now {width_text(claim.kind, plan.expected(claim.id, now))}"
        )
    ids = [claim.id for claim in plan.claims]
    claims = {claim.id: claim for claim in plan.claims}

    def row(pick: Any) -> list[Any]:
        cell = pick.cell
        effects = [_effect(plan, claims[i], pick.outlooks[i]) for i in ids]
        return [
            cell.objective,
            cell.model,
            format_size(cell.samples),
            cell.seeds,
            f"{cell.flops:.3g}",
            *effects,
        ]

    headers = [
        "objective",
        "model",
        "data size",
        "seeds",
        _unit(run).split(" ")[0],
        *(f"{i}: width after" for i in ids),
    ]
    lines.append(
        f"\ncandidates alone, the most narrowing per FLOP first "
        f"({min(SHOWN, len(plan.ranked))} of {len(plan.ranked)}):"
    )
    lines.append(render_table(headers, [row(p) for p in plan.ranked[:SHOWN]]))
    lines.append(
        f"\npicks, each given the ones before it "
        f"({sum(p.cell.seeds for p in plan.picks)} runs, {plan.flops:.3g} {_unit(run)}):"
    )
    lines.append(
        render_table(headers, [row(p) for p in plan.picks])
        if plan.picks
        else "  (no run narrows these claims)"
    )
    lines += [f"note: {note}" for note in plan.notes]
    return "\n".join(lines)


def _effect(plan: Any, claim: Any, outlook: Any) -> str:
    """What a pick leaves of a claim: its expected width, the chance it is decided, and (a gap)
    that the laws' gap is identifiable."""
    from fits.report.claims import width_text

    text = f"{width_text(claim.kind, plan.expected(claim.id, outlook))} decided {_share(outlook.decided)}"
    return text + (
        f" identifiable {_share(outlook.identifiable)}" if outlook.identifiable is not None else ""
    )


def _needs_text(plan: Any) -> str:
    """What claims lack before their widths can be planned, and the runs that supply it."""
    lines = ["needed first (no noise is assumed: no width can be forecast before these land):"]
    for need in plan.needs:
        run = need.cells[0] if need.cells else None
        cheapest = (
            f"{run.objective} / {run.model} at {format_size(run.samples)}, {run.seeds} seed(s)"
            if run
            else "none among the candidates"
        )
        lines.append(f"  {need.claim}: {need.what} (cheapest run: {cheapest})")
    picked = ", ".join(
        f"{c.objective} / {c.model} at {format_size(c.samples)} x{c.seeds}" for c in plan.first
    )
    lines.append(f"  runs picked for these: {picked or 'none within the limits'}")
    return "\n".join(lines)


def _cell(cell: Any) -> dict[str, Any]:
    return {
        "objective": cell.objective,
        "model": cell.model,
        "data_size": int(cell.samples),
        "seeds": cell.seeds,
        "flops": cell.flops,
    }


def _as_dict(run: Any, plan: Any) -> dict[str, Any]:
    def pick(p: Any) -> dict[str, Any]:
        outlooks = {i: _outlook(plan, i, o) for i, o in p.outlooks.items()}
        return _cell(p.cell) | {"narrowing": p.narrowing, "outlooks": outlooks}

    return {
        "metric": run.options.metric,
        "claims": [claim.id for claim in plan.claims],
        "flops_known": bool(run.flops_per_sample),
        "now": {i: _outlook(plan, i, o) for i, o in plan.now.items()},
        "ranked": [pick(p) for p in plan.ranked],
        "picks": [pick(p) for p in plan.picks],
        "flops": plan.flops,
        "notes": plan.notes,
        "needs": [
            {"claim": n.claim, "what": n.what, "runs": [_cell(c) for c in n.cells]} for n in plan.needs
        ],
        "first": [_cell(c) for c in plan.first],
    }


def _outlook(plan: Any, claim_id: str, outlook: Any) -> dict[str, Any]:
    """An outlook's keys: the expected width of the verdict's interval, and the planned one."""
    return {
        "width": plan.expected(claim_id, outlook),
        "planned_width": outlook.width,
        "decided": outlook.decided,
        "identifiable": outlook.identifiable,
        "effective_draws": outlook.effective,
    }


def _write(path: str, store: Any, sweep_name: str, picks: list[Any]) -> None:
    """The recorded sweep file with the picks in its `include:` (`orchestrator.sweepfile.rewrite`),
    written whole or not at all."""
    from orchestrator.sweepfile.rewrite import with_runs

    row = store.find_sweep(sweep_name)
    text = with_runs(sweep_name, row.spec_text, row.source, picks)
    target = Path(path)
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.write_text(text)
        partial.replace(target)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise InputError(f"--write {path}: {error.strerror}; choose a writable path") from None
