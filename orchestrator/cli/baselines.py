"""`orch baselines import|measure|list`: published and measured baselines, stored beside the runs."""

from pathlib import Path

import click

from db import WIDTHS, mask_url
from fits.report.text import render_table
from foundation.sizes import format_size
from orchestrator.cli.common import (
    emit_json,
    json_option,
    open_store,
    say,
    store_exists,
    store_option,
    store_url,
)
from orchestrator.cli.group import cli
from orchestrator.cli.heartbeat import working
from orchestrator.errors import InputError


@cli.group()
def baselines() -> None:
    """Published results to show beside measured curves."""


@baselines.command("import")
@click.argument("csv_file", type=click.Path(exists=True, dir_okay=False))
@store_option
@click.pass_context
def baselines_import(ctx: click.Context, csv_file: str) -> None:
    """Store the rows of a published-results CSV (idempotent: importing twice adds nothing).

    \b
        orch baselines import sweeps/published/jepa_prh.csv
    """
    from orchestrator.baselines import read_baselines

    rows = read_baselines(Path(csv_file), WIDTHS)
    store = open_store(store_url(ctx), create=True)
    added = store.write_baselines(rows)
    click.echo(f"{added} of {len(rows)} rows added to {store.url}", err=True)


@baselines.command("measure")
@click.argument("features_file", type=click.Path(dir_okay=False))
@click.argument("sweep_file", type=click.Path(dir_okay=False))
@click.option("--name", help="The model's name in tables and plots (default: its folder's name).")
@click.option("--objective", default="pretrained", show_default=True, help="What it was trained for.")
@store_option
@click.pass_context
@working
def baselines_measure(
    ctx: click.Context, features_file: str, sweep_file: str, name: str | None, objective: str
) -> None:
    """Score a pretrained model's features (from `orch features`) on a sweep's eval set, as a
    trial's checkpoint is scored, and store each value as a measured baseline.

    \b
        orch features manifest wit.yaml --out eval.jsonl
        orch features text --model models/all-mpnet-base-v2 --data eval.jsonl --out mpnet.npz
        orch baselines measure mpnet.npz wit.yaml --objective contrastive
    """
    from orchestrator.measured import measure_baselines
    from orchestrator.sweepfile import load_spec

    spec = load_spec(sweep_file)
    rows, skipped = measure_baselines(Path(features_file), spec, name, objective)
    for metric in skipped:
        say(f"{metric} skipped: a retrieval metric fits its map on rows these features do not hold")
    url = store_url(ctx, spec.store)
    added = open_store(url, create=True).write_baselines(rows)
    columns = ["model", "metric", "reference", "value", "se", "null_p95"]
    click.echo(render_table(columns, [[_cell(getattr(row, c)) for c in columns] for row in rows]))
    say(f"{added} measured baseline(s) added to {mask_url(url)} ({len(rows) - added} already there)")


def _cell(value: object) -> object:
    """A table cell: blank for a missing number (None or NaN), 4 significant digits for one."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return float(f"{value:.4g}") if isinstance(value, float) else value


@baselines.command("list")
@json_option
@store_option
@click.pass_context
def baselines_list(ctx: click.Context, as_json: bool) -> None:
    """Show the published and measured baselines in the store, side by side: a measured one
    (source 'measured') with its eval-item SE and the 95th percentile of its permutation null.

    \b
        orch baselines list
    """
    url = store_url(ctx)
    if not store_exists(url):
        raise InputError(f"store {mask_url(url)} does not exist (run 'orch baselines import CSV' first)")
    frame = open_store(url).baselines_frame()
    if as_json:
        emit_json({"store": mask_url(url), "baselines": frame.drop(columns="id").to_dict("records")})
        return
    if frame.empty:
        click.echo(f"no baselines in {mask_url(url)}", err=True)
        return
    columns = ["source", "model", "objective", "samples", "metric", "reference", "eval_set", "value", "se"]
    columns.append("null_p95")
    shown = [
        [_size_or_blank(row["samples"]) if c == "samples" else _cell(row[c]) for c in columns]
        for row in frame.to_dict("records")
    ]
    click.echo(render_table(columns, shown))


def _size_or_blank(samples: float | None) -> str:
    """A published sample count as a size; blank where the paper gave none (not 'nan')."""
    return "" if samples is None or samples != samples else format_size(int(samples))
