"""How `orch next` shows a plan: its table of candidates and picks with what each leaves of every
claim (text), or every number of it (JSON)."""

from pathlib import Path
from typing import Any

from foundation.sizes import format_size
from orchestrator.cli.plan_costs import Costs

__all__ = ["interval", "plan_json", "plan_text", "unit"]

SHOWN = 10  # candidates listed per plan


def unit(run: Any, costs: Costs | None = None) -> str:
    if run.flops_per_sample:
        return "FLOPs"
    if costs is not None and costs.per_sample:
        return f"FLOPs (estimated with {Path(costs.source).name}'s model: the store recorded none)"
    return "samples (no FLOPs recorded)"


def interval(verdict: Any) -> str:
    """The verdict's value and interval as `orch check` shows them ('-' for what it lacks)."""
    from fits.report.claims import verdict_interval

    return f"{'-' if verdict.value is None else f'{verdict.value:.4g}'} {verdict_interval(verdict)}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def plan_text(run: Any, plan: Any, costs: Costs) -> str:
    from fits.report.claims import width_text
    from fits.report.text import render_table

    lines = [_needs_text(run, plan, costs)] if plan.needs else []
    if not plan.claims:  # every claim lacks something first: nothing to rank yet
        return "\n".join(lines)
    verdicts = {v.claim.id: v for v in run.verdicts}
    for claim in plan.claims:
        now = plan.now[claim.id]
        lines.append(
            f"claim {claim.id} ({claim.kind}): {verdicts[claim.id].verdict}, "
            f"{interval(verdicts[claim.id])}; "
            f"95% width now {width_text(claim.kind, plan.expected(claim.id, now))}"
        )
    ids = [claim.id for claim in plan.claims]
    claims = {claim.id: claim for claim in plan.claims}

    priced = costs.gpu_hours(run, [p.cell for p in plan.ranked]) is not None

    def row(pick: Any) -> list[Any]:
        cell = pick.cell
        effects = [_effect(plan, claims[i], pick.outlooks[i]) for i in ids]
        hours = [f"{costs.gpu_hours(run, [cell]):,.1f}"] if priced else []
        return [
            cell.objective,
            cell.model,
            format_size(cell.samples),
            cell.seeds,
            f"{cell.flops:.3g}",
            *hours,
            *effects,
        ]

    headers = [
        "objective",
        "model",
        "data size",
        "seeds",
        unit(run, costs).split(" ")[0],
        *(["gpu_h"] if priced else []),
        *(f"{i}: width after" for i in ids),
    ]
    lines.append(
        f"\ncandidates alone, the most narrowing per FLOP first "
        f"({min(SHOWN, len(plan.ranked))} of {len(plan.ranked)}):"
    )
    lines.append(render_table(headers, [row(p) for p in plan.ranked[:SHOWN]]))
    lines.append(
        f"\npicks, each given the ones before it "
        f"({sum(p.cell.seeds for p in plan.picks)} runs, {plan.flops:.3g} {unit(run, costs)}"
        f"{costs.text(run, [p.cell for p in plan.picks])}):"
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


def _needs_text(run: Any, plan: Any, costs: Costs) -> str:
    """What claims lack before their widths can be planned, and the runs that supply it."""
    lines = ["needed first (no noise is assumed: no width can be forecast before these land):"]
    for need in plan.needs:
        cell = need.cells[0] if need.cells else None
        cheapest = (
            f"{cell.objective} / {cell.model} at {format_size(cell.samples)}, {cell.seeds} seed(s)"
            if cell
            else "none among the candidates"
        )
        lines.append(f"  {need.claim}: {need.what} (cheapest run: {cheapest})")
    picked = ", ".join(
        f"{c.objective} / {c.model} at {format_size(c.samples)} x{c.seeds}" for c in plan.first
    )
    lines.append(
        f"  runs picked for these: {picked or 'none within the limits'}{costs.text(run, list(plan.first))}"
    )
    return "\n".join(lines)


def _cell(cell: Any) -> dict[str, Any]:
    return {
        "objective": cell.objective,
        "model": cell.model,
        "data_size": int(cell.samples),
        "seeds": cell.seeds,
        "flops": cell.flops,
    }


def plan_json(run: Any, plan: Any, costs: Costs) -> dict[str, Any]:
    def pick(p: Any) -> dict[str, Any]:
        outlooks = {i: _outlook(plan, i, o) for i, o in p.outlooks.items()}
        return _cell(p.cell) | {
            "gpu_hours": costs.gpu_hours(run, [p.cell]),
            "narrowing": p.narrowing,
            "outlooks": outlooks,
        }

    spent = [*plan.first, *(p.cell for p in plan.picks)]
    hours = costs.gpu_hours(run, spent)
    return {
        "gpu_hours": hours,
        "cost": None if hours is None or costs.price is None else hours * costs.price,
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
