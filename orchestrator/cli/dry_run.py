"""`orch sweep FILE --dry-run`: what a sweep would run, before anything runs: each trial with its
estimated size, GPU-hours and the pack it would share a process in, and the totals."""

import os
from typing import Any

import click

from db import FINISHED, StoreError, StoreURLError, mask_url
from db.rates import training_rates
from fits.report.text import render_table
from foundation.sizes import format_size
from orchestrator.cli.common import emit_json, open_store, store_exists
from orchestrator.run.packing import pack_numbers, sweep_packs
from orchestrator.run.plan import Throughput, plan, totals
from orchestrator.sweepfile import Spec

__all__ = ["show_plan"]


def show_plan(spec: Spec, url: str, asked: Any, as_json: bool) -> None:
    """The plan's table and totals (or its JSON), the trials' states read from the store
    (`asked`: `orch sweep`'s `SweepFlags`)."""
    throughput = Throughput(asked.peak_tflops, asked.mfu)
    rows = plan(spec, _known_statuses(url, [t.key for t in spec.trials]), throughput)
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
        emit_json({"sweep": spec.name, "store": mask_url(url), "trials": rows, "totals": summary})
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
