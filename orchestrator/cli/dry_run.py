"""`orch sweep FILE --dry-run`: what a sweep would run, before anything runs: each trial with its
estimated size, GPU-hours and the pack it would share a process in, the totals, and whether the
design can decide each claim it states (`orchestrator.sweepfile.decidable`)."""

import os
from dataclasses import asdict
from typing import Any

import click

from db import FINISHED, StoreError, StoreURLError, mask_url
from db.rates import training_rates
from fits.report.text import render_table
from foundation.sizes import format_size
from orchestrator.cli.common import emit_json, open_store, store_exists
from orchestrator.errors import InputError
from orchestrator.run.packing import pack_numbers, sweep_packs
from orchestrator.run.plan import Throughput, plan, totals
from orchestrator.sweepfile import Spec, load_spec
from orchestrator.sweepfile.decidable import ClaimDesign, check_design

__all__ = ["refuse_undecidable", "show_design", "show_plan"]


def show_design(sweep_file: str, as_json: bool, strict: bool) -> None:
    """`orch check --design`: the design check alone, at the dry run's default GPU model."""
    spec = load_spec(sweep_file)
    if not spec.claims:
        raise InputError(f"{sweep_file}: states no claims (claims: FILE.yaml in the sweep file)")
    checks = check_design(spec, plan(spec, {}))
    if as_json:
        emit_json({"sweep": spec.name, "design": _design_json(checks)})
    else:
        click.echo(_design_text(spec, checks))
    _refuse(spec, checks, strict)


def _shown_path(path: str) -> str:
    """A path as the user would type it: relative to here where it lies below."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _design_json(checks: tuple[ClaimDesign, ...]) -> list[dict]:
    return [asdict(check) | {"decidable": check.decidable} for check in checks]


def refuse_undecidable(spec: Spec, strict: bool) -> None:
    """Before a sweep runs: a warning line for each claim its design can never decide, or with
    `strict` an InputError naming the first (no GPU-hours: a sweep's start-up plans nothing)."""
    checks = check_design(spec, ())
    _refuse(spec, checks, strict)
    for check in checks:
        for fault in (f for f in check.faults if f.never):
            click.echo(f"orch: warning: {spec.source}: claim {check.claim}: {fault.what}", err=True)


def _refuse(spec: Spec, checks: tuple[ClaimDesign, ...], strict: bool) -> None:
    never = [(c.claim, f.what) for c in checks for f in c.faults if f.never]
    if strict and never:
        claim, what = never[0]
        others = f" (and {len(never) - 1} more: --dry-run lists them)" if len(never) > 1 else ""
        raise InputError(f"{spec.source}: claim {claim}: the design can never decide it: {what}{others}")


def show_plan(spec: Spec, url: str, asked: Any, as_json: bool, strict: bool = False) -> None:
    """The plan's table and totals (or its JSON), the trials' states read from the store
    (`asked`: `orch sweep`'s `SweepFlags`), and the design check (`strict`: an InputError,
    after the plan is shown, where a claim can never be decided)."""
    throughput = Throughput(asked.peak_tflops, asked.mfu)
    rows = plan(spec, _known_statuses(url, [t.key for t in spec.trials]), throughput)
    checks = check_design(spec, rows)
    packing = _packing(
        spec,
        url,
        rows,
        asked.address,
        asked.num_cpus,
        asked.num_gpus,
        asked.max_concurrent,
        asked.pack_below_s,
    )
    summary = {**totals(rows, asked.cluster_gpus), "packing": packing}
    if as_json:
        design = _design_json(checks)
        emit_json(
            {"sweep": spec.name, "store": mask_url(url), "trials": rows, "totals": summary, "design": design}
        )
        _refuse(spec, checks, strict)
        return
    click.echo(_plan_table(rows))
    click.echo(
        f"\n{summary['trials']} trials, {format_size(summary['samples'])} samples, "
        f"~{summary['flops_est']:.3g} training FLOPs (estimated); "
        + ", ".join(f"{n} {state}" for state, n in sorted(summary["by_state"].items()))
    )
    click.echo(_gpu_time(summary, throughput))
    to_run = sum(1 for row in rows if row["state"] not in FINISHED)
    click.echo(_packing_line(packing, asked.pack_below_s, to_run))
    if checks:
        click.echo("\n" + _design_text(spec, checks))
    _refuse(spec, checks, strict)


def _design_text(spec: Spec, checks: tuple[ClaimDesign, ...]) -> str:
    """The design check: a row a claim (its runs and their GPU-hours), then each fault with its fix."""
    here = [c for c in checks if c.elsewhere is None]
    never = sum(not c.decidable for c in here)
    weak = sum(c.decidable and bool(c.faults) for c in here)
    head = (
        f"{never} of {len(here)} claims can never be decided by this design"
        if never
        else f"every claim {'it measures ' if len(here) < len(checks) else ''}can be decided"
    )
    if weak:
        head += f"; {weak} only on weaker evidence than the design could give"
    if len(here) < len(checks):
        other = len(checks) - len(here)
        head += f"; {other} read what another sweep measures (an eval set or reference not this one's)"
    lines = [f"design check of the claims ({_shown_path(spec.claims_source or spec.source)}): {head}"]
    on_gpus = any(c.gpu_hours is not None for c in checks)
    body = []
    for check in checks:
        state = "NEVER" if not check.decidable else ("weak" if check.faults else "decidable")
        state = "elsewhere" if check.elsewhere else state
        hours = [f"{check.gpu_hours:,.0f}" if check.gpu_hours is not None else ""] if on_gpus else []
        body.append([check.claim, check.kind, check.runs, *hours, state])
    headers = ["claim", "kind", "runs", *(["gpu_h"] if on_gpus else []), "design"]
    lines.append(render_table(headers, body))
    for check in checks:
        lines += [f"  {check.claim}: {'never' if f.never else 'weak'}: {f.what}" for f in check.faults]
        if check.elsewhere:
            lines.append(f"  {check.claim}: elsewhere: it reads {check.elsewhere}")
    if on_gpus:
        lines.append("(a claim's gpu_h: the runs its curves take; claims share runs, so they do not add up)")
    return "\n".join(lines)


def _known_statuses(url: str, keys: list[str]) -> dict[str, str]:
    """Trial states for a dry run; an absent store means all new, an unreachable one unknown."""
    if not store_exists(url):
        return {}
    try:
        return open_store(url).trial_statuses(keys)
    except StoreURLError:
        raise
    except StoreError as error:
        click.echo(f"orch: warning: {error}; trial states unknown", err=True)
        return dict.fromkeys(keys, "unknown")


def _packing(
    spec: Spec,
    url: str,
    rows: list[dict],
    address: str | None,
    num_cpus: int | None,
    num_gpus: float | None,
    max_concurrent: int | None,
    below_s: float,
) -> dict:
    """Which trials to run would share a pack, as `orch sweep` would pack them on this machine:
    each row's "pack" (its number, or None), and how many packs hold how many trials (None on a
    cluster, where the slots the cluster has when it runs decide)."""
    for row in rows:
        row["pack"] = None
    if address or below_s <= 0:
        return {"packs": None if address else 0, "packed": None if address else 0, "rates": None}
    todo = {row["key"] for row in rows if row["state"] not in FINISHED}
    trials = [trial for trial in spec.trials if trial.key in todo]
    objectives = {trial.objective for trial in trials}
    rates = _measured_rates(url, objectives)
    cluster = {"CPU": float(num_cpus or os.cpu_count() or 1), "GPU": float(num_gpus or 0)}
    numbers = pack_numbers(sweep_packs(spec, trials, rates, cluster, max_concurrent, below_s))
    for row in rows:
        row["pack"] = numbers.get(row["key"])
    measured = "measured" if rates else "assumed"
    return {"packs": len(set(numbers.values())), "packed": len(numbers), "rates": measured}


def _measured_rates(url: str, objectives: set[str]) -> dict[str, float]:
    """Each objective's training rate in the store; none where there is no store, or it does not
    answer (`_known_statuses` has said so)."""
    if not objectives or not store_exists(url):
        return {}
    try:
        return training_rates(open_store(url), objectives)
    except StoreURLError:
        raise
    except StoreError:
        return {}


def _packing_line(packing: dict, below_s: float, to_run: int) -> str:
    """The dry run's line on packs: how many trials share how many processes, and why."""
    if packing["packs"] is None:
        return "packs: decided when the sweep runs, from the slots the cluster has then"
    if below_s <= 0:
        return "packs: none (--no-pack or --pack-below 0): every trial runs in a process of its own"
    if not to_run:
        return "packs: none: every trial is finished in the store"
    rates = (
        "from the store's measured training rates"
        if packing["rates"] == "measured"
        else "at an assumed rate: the store has no done trial to measure one"
    )
    if not packing["packed"]:
        return f"packs: none: no trial to run is estimated under {below_s:g} s ({rates})"
    line = (
        f"packs: {packing['packed']} of the {to_run} trials to run are estimated under {below_s:g} s "
        f"({rates}) and run in {packing['packs']} packs, one process each (the pack column)"
    )
    alone = to_run - packing["packed"]
    return line + (f"; {alone} run alone" if alone else "")


def _gpu_time(summary: dict, throughput: Throughput) -> str:
    """The plan's GPU-hours and, on a cluster of --cluster-gpus, its makespan, with what they assume."""
    if summary["gpu_hours_est"] is None:
        return "no trial asks for a GPU (resources.gpu: 0): no GPU-hours to estimate"
    assumed = (
        f"at {throughput.mfu:.0%} of {throughput.peak_tflops:g} TFLOP/s a GPU, data-parallel workers "
        "scaling perfectly, evaluation not counted"
    )
    line = f"~{summary['gpu_hours_est']:,.0f} GPU-hours ({assumed})"
    if "makespan_hours_est" in summary:
        line += (
            f"\non {summary['cluster_gpus']} GPUs: ~{_hours(summary['makespan_hours_est'])} with the "
            f"longest trials started first (at least {_hours(summary['makespan_floor_hours'])}: the longest "
            "trial, or the GPU-hours spread over every GPU)"
        )
    return line


def _hours(hours: float) -> str:
    if hours == float("inf"):
        return "never (a trial asks for more GPUs than the cluster has)"
    return f"{hours:,.1f} h ({hours / 24:,.1f} days)" if hours >= 48 else f"{hours:,.1f} h"


def _plan_table(rows: list[dict]) -> str:
    has_recipe = any(row["recipe"] for row in rows)
    on_gpus = any(row["gpu_hours_est"] is not None for row in rows)
    headers = ["objective", "model", "params", "data_size", "seed"]
    headers += ["recipe"] if has_recipe else []
    headers += ["workers"] + (["gpu_h"] if on_gpus else [])
    headers += ["held_out", "pack", "key", "state"]
    body = []
    for row in rows:
        line = [
            row["objective"],
            row["model"],
            format_size(row["n_params_est"]),
            format_size(row["data_size"]),
            row["seed"],
        ]
        if has_recipe:
            line.append(" ".join(f"{k.removeprefix('train.')}={v}" for k, v in row["recipe"].items()))
        line.append(row["workers"])
        if on_gpus:
            line.append("" if row["gpu_hours_est"] is None else f"{row['gpu_hours_est']:,.1f}")
        line += ["yes" if row["held_out"] else "", row["pack"] or "", row["key"][:10], row["state"]]
        body.append(line)
    return render_table(headers, body)
