"""`orch next`: the runs that would settle the open claims, ranked by what they buy per FLOP
(`fits.next.plan`), with their GPU-hours and cost, and optionally written as a sweep file whose
`include:` holds the picks.

The candidates are the claims' objectives on their curves' model, at every data size of the
sweep's grid and one octave beyond each end, with 1 to 3 new seeds, none past the corpus. The
sweep file behind the costs is the sweep's own, or `--template` for a sweep orch did not train."""

from pathlib import Path
from typing import Any

import click

from fits.curve.settings import DEFAULT_METRIC
from foundation.errors import did_you_mean
from foundation.sizes import format_size
from orchestrator.cli.common import (
    BudgetParam,
    FiniteRange,
    SizeParam,
    budget_flops,
    claims_targets,
    emit_json,
    json_option,
    open_sweep,
    say,
    store_option,
    store_url,
    throughput_options,
)
from orchestrator.cli.group import cli
from orchestrator.cli.heartbeat import doing, working
from orchestrator.cli.judging import claim_runs, claims_and_sweep, open_claims, sweep_design
from orchestrator.cli.plan_costs import Costs, corpus_in, corpus_note, costs_of, sweep_file
from orchestrator.cli.plan_text import plan_json, plan_text, unit
from orchestrator.errors import InputError

__all__ = ["next_runs"]


@cli.command(name="next")
@claims_targets
@click.option(
    "--claim", "claim_ids", multiple=True, help="Plan for this claim (default: every inconclusive one)."
)
@click.option(
    "--budget",
    type=BudgetParam(),
    default=None,
    help="What the picks may spend, FLOPs (3e15) or GPU-hours (12gpu-h, at --peak-tflops and --mfu); "
    "with --runs: at most that many runs within it.",
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
@click.option(
    "--template",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="A sweep file whose data, recipe and resources the picks run on (an imported sweep has "
    "none): its FLOPs model prices them, its data.corpus bounds them, --write writes the picks alone.",
)
@click.option(
    "--corpus",
    type=SizeParam(),
    default=None,
    help="Samples one epoch of the training text holds: no larger run is proposed (default: data.corpus).",
)
@throughput_options("For GPU-hours")
@click.option(
    "--gpu-hour-cost", type=FiniteRange(min=0), default=None, help="Price of a GPU-hour: the picks' cost."
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
    template: str | None,
    corpus: int | None,
    peak_tflops: float,
    mfu: float,
    gpu_hour_cost: float | None,
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
        orch next paper --template sweeps/goodview_vs_ntp_paper.yaml --gpu-hour-cost 2.5 --write more.yaml
    """
    from orchestrator.run.plan import Throughput

    claims_file, sweep_name = claims_and_sweep(targets, "next")
    _check_write(write_to, [store_url(ctx), claims_file, template])  # --write may name the store
    store, sweep_name = open_sweep(ctx, sweep_name)
    design, stated = sweep_design(store, sweep_name, DEFAULT_METRIC, claims_file)
    _check_ids(claim_ids, stated)
    spec = _trainable(sweep_file(store, sweep_name, template), sweep_name, write_to)
    corpus = corpus or corpus_in(spec)
    # the planner runs once, here: the fits behind the verdicts plan nothing
    doing(f"fitting sweep {sweep_name}'s curves and judging its {len(stated)} claims")
    checked = claim_runs(store, sweep_name, design, stated, command="next", detail=False, next_runs=False)
    chosen, words = open_claims(checked.runs, claim_ids)
    costs = costs_of(spec, Throughput(peak_tflops, mfu), gpu_hour_cost, chosen)
    candidates = _candidates(chosen, _sizes(design, spec if template else None, chosen), corpus, costs)
    budget = _check_budget(budget, candidates, costs)  # every bad input is said before anything else
    for line in words:
        say(line)
    if not candidates:
        if as_json:
            emit_json({"sweep": sweep_name, "plans": []})
        return
    plans = _plans(candidates, budget, 4 if budget is None and runs is None else runs, seed)
    if write_to is not None:
        _write(write_to, store, sweep_name, plans, spec if template is not None else None)
    free = _releases(chosen, _released_refit(store, sweep_name, design, stated))
    if as_json:
        plans_json = [plan_json(run, plan, costs) for run, plan in plans]
        emit_json({"sweep": sweep_name, "corpus": corpus, "free": free, "plans": plans_json})
    else:
        notes = "\n".join([f"free: {line}" for line in free] + [f"note: {corpus_note(corpus, spec)}"])
        click.echo("\n\n".join(plan_text(run, plan, costs) for run, plan in plans) + "\n" + notes)
    if write_to is not None:
        say(_written(write_to, sweep_name, imported=template is not None))


def _trainable(spec: Any, sweep_name: str, write_to: str | None) -> Any:
    """The sweep file the picks run on; an imported sweep has none to write them into."""
    if write_to is not None and spec is None:
        raise InputError(
            f"sweep {sweep_name} was imported: orch cannot train its runs without a sweep file; "
            "give --template SWEEP.yaml (its data, recipe and resources) with --write"
        )
    return spec


def _check_write(path: str | None, inputs: list[str | None]) -> None:
    """--write names neither the store, the claims file nor the template, nor a file orch did
    not write, nor a place its partial file cannot go: said before the store is opened."""
    from orchestrator.outputs import check_outputs, sqlite_file

    if path is None:
        return
    target, (url, *files) = Path(path), inputs
    check_outputs("--write", [target], [sqlite_file(url), *(Path(f) for f in files if f)])
    partial = _partial(target)
    if not target.parent.is_dir():
        raise InputError(f"--write {path}: no folder {target.parent} (make it first)")
    if partial.exists() and not partial.is_file():
        raise InputError(f"--write {path}: {partial} (its partial file) is there and is not a file; move it")


def _partial(target: Path) -> Path:
    return target.with_name(f".{target.name}.partial")


def _sizes(design: Any, template: Any, chosen: list[tuple[Any, list]]) -> list[int]:
    """The data sizes a pick may take: the sweep's grid (none for an import: then each claim's
    measured sizes and its `at`); with a template, also those of its sizes that lie between the
    measured ones or within an octave of their ends (an import's 21.6M and 900M gain 11.6M to
    900M), with the sizes the claims are read at."""
    sizes = set(design.grid.get("data_size", ()))
    curves = [c for run, _ in chosen for c in (*run.curves, *run.curves.unfitted)]
    measured = sizes | {int(s) for c in curves for s in c.seen.samples}
    if template is None or not measured:
        return sorted(sizes)
    low, high = min(measured) / 2, max(measured) * 2
    read_at = {int(claim.at) for _, claims in chosen for claim in claims if claim.at is not None}
    return sorted(measured | read_at | {t.data_size for t in template.trials if low <= t.data_size <= high})


def _candidates(chosen: list[tuple[Any, list]], sizes: Any, corpus: int | None, costs: Costs) -> list:
    """[(fit run, its open claims, the candidate cells)]: the grid's sizes and one octave past
    each end, none past the corpus."""
    from fits.next.plan import candidate_cells

    return [
        (run, claims, candidate_cells(run.curves, claims, sizes, corpus, costs.per_sample))
        for run, claims in chosen
    ]


def _plans(candidates: list, budget: float | None, runs: int | None, seed: int) -> list[tuple[Any, Any]]:
    """[(fit run, its plan)]: orch next's greedy picks for each fit run's open claims."""
    from fits.next.plan import plan_runs

    doing(
        f"planning: simulating what each of {sum(len(c) for *_, c in candidates)} candidate runs would tell"
    )
    return [
        (run, plan_runs(claims, run.curves, run.options, run.verdicts, cells, budget, runs, seed))
        for run, claims, cells in candidates
    ]


def _written(path: str, sweep_name: str, imported: bool) -> str:
    """What to do with the picks written to `path`."""
    if imported:
        return (
            f"wrote {path}: run the picks with 'orch sweep {path}', then export them and "
            f"import them into sweep {sweep_name} (the file's first lines say how) and 'orch check'"
        )
    return f"wrote {path}: run the picks with 'orch sweep {path}', then 'orch check'"


def _releases(chosen: list[tuple[Any, list]], refit: Any) -> list[str]:
    """The runs that cost nothing: a held-out size an open gap reads its level at (the runs
    exist; released, the laws see the level the claim is read at). Where the holdout is the
    sweep's samples_above, `refit()` judges the claims with it released (verdicts by id), and
    the line gives the width that refit has; else a refit after editing the holdout decides."""
    from fits.claims.claim import Kind
    from fits.claims.common import SIZE_PRECISION, claim_curve
    from fits.report.claims import width_text

    found = []
    for run, claims in chosen:
        for claim in (c for c in claims if c.kind is Kind.GAP and c.at is not None):
            curve = claim_curve(run.curves, claim, claim.slower)
            held = [
                h for h in (curve.held_out if curve else ()) if abs(h.samples / claim.at - 1) < SIZE_PRECISION
            ]
            if not held:
                continue
            line = (
                f"{claim.id}: release {format_size(claim.at)} of {claim.slower}/{curve.key.model} from "
                f"the holdout ({held[0].seeds} seed(s), already run): its laws then see the level the "
                "claim reads, and the forecast claim loses that cell"
            )
            released = refit()
            if released is None:
                found.append(line + " (edit the sweep file's holdout, then orch check)")
                continue
            before = next(v for v in run.verdicts if v.claim.id == claim.id)
            after = released[claim.id]
            widths = [width_text(claim.kind, _width(claim, v)) for v in (before, after)]
            found.append(
                f"{line}; a refit with it released: width {widths[0]} -> {widths[1]}, "
                f"{before.verdict} -> {after.verdict} (--holdout-above at import, or holdout.samples_above)"
            )
    return found


def _width(claim: Any, verdict: Any) -> float:
    from fits.next.plan import interval_width

    width = interval_width(claim, verdict.interval)
    return float("inf") if width is None else width


def _released_refit(store: Any, sweep_name: str, design: Any, claims: Any) -> Any:
    """A function judging the claims with the sweep's samples_above holdout released, once, on
    first call (verdicts by claim id); None where the holdout is not samples_above (per-trial
    holdout rules are recorded with the trials: only a new sweep file releases them)."""
    import dataclasses
    import functools

    if design.holdout_above is None:
        return lambda: None

    @functools.cache
    def refit() -> dict[str, Any]:
        released = dataclasses.replace(design, holdout_above=None)
        checked = claim_runs(
            store, sweep_name, released, claims, command="next", detail=False, next_runs=False
        )
        return {v.claim.id: v for v in checked.verdicts}

    return refit


def _check_budget(
    asked: tuple[float, str] | None, candidates: list[tuple[Any, Any, list]], costs: Costs
) -> float | None:
    """The budget in FLOPs; one below every plan's cheapest candidate run buys nothing: one line
    saying so."""
    budget = budget_flops(asked, costs.throughput)
    for run, _, cells in candidates:
        cheapest = min(cells, key=lambda c: c.flops, default=None)
        if cheapest is not None and budget is not None and budget < cheapest.flops:
            raise InputError(
                f"--budget {budget:.3g} is below the cheapest candidate run ({cheapest.flops:.3g} "
                f"{unit(run, costs)}: {cheapest.objective} at {format_size(cheapest.samples)}); raise it"
            )
    return budget


def _check_ids(claim_ids: tuple[str, ...], claims: Any) -> None:
    known = [claim.id for claim in claims]
    for claim_id in claim_ids:
        if claim_id not in known:
            raise InputError(
                f"{claims.source}: no claim {claim_id!r}{did_you_mean(claim_id, known)} "
                f"(claims: {', '.join(known)})"
            )


def _write(path: str, store: Any, sweep_name: str, plans: list[Any], template: Any) -> None:
    """The recorded sweep file with the plans' picks in its `include:`, or the template running
    the picks alone (`template`: its Spec; `orchestrator.sweepfile.rewrite`), written whole or not
    at all."""
    from orchestrator.sweepfile.rewrite import runs_only, with_runs

    picks = [c for _, plan in plans for c in (*plan.first, *(p.cell for p in plan.picks))]
    if template is not None:
        recorded = store.trials_frame(sweep_name)
        taken = set(zip(recorded.objective, recorded.model, recorded.seed.astype(int), strict=True))
        text = runs_only(sweep_name, template.text, template.source, picks, taken)
    else:
        row = store.find_sweep(sweep_name)
        text = with_runs(sweep_name, row.spec_text, row.source, picks)
    target = Path(path)
    partial = _partial(target)
    try:
        partial.write_text(text)
        partial.replace(target)
    except OSError as error:
        if partial.is_file():
            partial.unlink()
        raise InputError(f"--write {path}: {error.strerror}; choose a writable path") from None
