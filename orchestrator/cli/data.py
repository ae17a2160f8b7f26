"""`orch align`, `orch baselines`, `orch export` and `orch db`: data into and out of the store."""

import hashlib
import re
from pathlib import Path

import click
import yaml

from db import SCHEMA_VERSION, WIDTHS, mask_url
from fits.report.text import render_table
from foundation.sizes import format_size
from orchestrator.cli.common import (
    SizeParam,
    emit_json,
    open_store,
    open_sweep,
    say,
    store_exists,
    store_option,
    store_url,
)
from orchestrator.cli.group import cli
from orchestrator.errors import InputError, OrchError
from orchestrator.interrupts import held_signals, sigterm_interrupts


@cli.command()
@click.argument("features_a", type=click.Path(dir_okay=False))
@click.argument("features_b", type=click.Path(dir_okay=False))
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    default=("mutual_knn@10", "cycle_knn@10", "cknna@10", "cka", "cka_unbiased", "svcca"),
    show_default=True,
)
@click.option("--clamp/--no-clamp", default=True, help="Clamp |x| at each layer's 95th percentile first.")
@click.option(
    "--compat",
    type=click.Choice(["platonic-rep"]),
    help="Score as platonic-rep does: one clamp for the layer stack, the best pair above 0.",
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def align(
    ctx: click.Context,
    features_a: str,
    features_b: str,
    metrics: tuple[str, ...],
    clamp: bool,
    compat: str | None,
    as_json: bool,
) -> None:
    """Score the alignment of two row-paired feature files (.npy, or .npz with one array a layer).

    Retrieval metrics fit the A -> B map on the first half of the rows and score the second.

    \b
        orch align text.npy dinov2.npy --metric mutual_knn@10 --metric cka
        orch align llama.npz dinov2.npz --metric mutual_knn@10 --compat platonic-rep
    """
    from orchestrator.features import score_files

    if compat and ctx.get_parameter_source("clamp") is not click.core.ParameterSource.DEFAULT:
        raise InputError(f"--compat {compat} clamps as platonic-rep does: drop --clamp/--no-clamp")
    rows = score_files(Path(features_a), Path(features_b), metrics, clamp, notify=say, compat=compat)
    if as_json:
        emit_json({"a": features_a, "b": features_b, "scores": rows})
        return
    headers = ["metric", "value", "layer_a", "layer_b"]
    click.echo(render_table(headers, [[r[h] for h in headers] for r in rows]))


@cli.group()
def db() -> None:
    """The store itself."""


@db.command("upgrade")
@store_option
@click.pass_context
def db_upgrade(ctx: click.Context) -> None:
    """Bring a store written by an older orch to this orch's schema, in place, keeping every row.

    \b
        orch --store sqlite:///orch.db db upgrade
    """
    url = store_url(ctx)
    if not store_exists(url):
        raise InputError(f"store {mask_url(url)} does not exist (nothing to upgrade)")
    store = open_store(url, upgrade=True)  # an empty or foreign database: refused
    if store.upgraded_from is None:
        click.echo(f"store {store.url} is already at schema {SCHEMA_VERSION}", err=True)
    else:
        done = f"upgraded from schema {store.upgraded_from} to {SCHEMA_VERSION}"
        click.echo(f"store {store.url} {done}", err=True)


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


@cli.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--sweep", "sweep_name", required=True, help="The sweep the runs are recorded as.")
@click.option(
    "--points",
    type=click.Choice(["auto", "final", "all"]),
    default="auto",
    show_default=True,
    help="What `orch fit` takes of each run: its final checkpoint, or every checkpoint (constant-rate "
    "runs); auto: every checkpoint when each run is one (objective, model, seed) with several.",
)
@click.option("--holdout-above", type=SizeParam(), default=None, help="Hold out checkpoints past S in fits.")
@click.option(
    "--claims",
    "claims_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="The claims these runs are checked against: `orch fit` judges them, as a sweep file's.",
)
@store_option
@click.pass_context
def import_runs(
    ctx: click.Context,
    file: str,
    sweep_name: str,
    points: str,
    holdout_above: int | None,
    claims_file: str | None,
) -> None:
    """Record runs orch did not train (CSV or Parquet: objective, model, data_size, seed,
    samples_seen, metric, reference, eval_set, value; optional se, flops) as a sweep of their
    own, for `orch fit` and `orch check`. Importing the same file again adds nothing.

    \b
        orch import released_logs.csv --sweep paper_logs
        orch check sweeps/claims/jepa_prh.yaml paper_logs
    """
    from db import TrialStatus
    from orchestrator.imports import read_runs
    from orchestrator.sweepfile.claims import load_claims
    from orchestrator.sweepfile.imported import imported_design

    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", sweep_name):
        raise InputError(f"--sweep {sweep_name!r}: use letters, digits, '_', '.' and '-'")
    if claims_file is not None:
        load_claims(claims_file)  # a bad claims file is refused before anything is written
    runs = read_runs(Path(file), sweep_name, WIDTHS, points, holdout_above, claims_file)
    store = open_store(store_url(ctx), create=True)
    found = store.find_sweep(sweep_name)
    if found is not None and imported_design(yaml.safe_load(found.spec_text)) is None:
        raise InputError(
            f"sweep {sweep_name} in {store.url} was run by orch sweep: import under another --sweep"
        )
    keys = [trial.key for trial in runs.trials]
    with store.batch():  # the sweep, its trials and every row land together, or nothing does
        store.record_sweep(
            sweep_name, runs.spec_text, hashlib.sha256(runs.spec_text.encode()).hexdigest(), file, runs.trials
        )
        new = [key for key, status in store.trial_statuses(keys).items() if status == TrialStatus.PENDING]
        for key in new:
            store.set_status(key, TrialStatus.RUNNING, host="imported", device="-")
            extra = {"n_params": runs.n_params[key]} if key in runs.n_params else {}
            store.set_status(key, TrialStatus.DONE, samples_seen=runs.samples_seen[key], **extra)
        added = store.write_measurements(runs.measurements)
    click.echo(
        f"{sweep_name}: {len(new)} of {len(keys)} trials and {added} of {len(runs.measurements)} rows added "
        f"to {store.url} (points: {yaml.safe_load(runs.spec_text)['imported']['points']})",
        err=True,
    )


@baselines.command("measure")
@click.argument("features_file", type=click.Path(dir_okay=False))
@click.argument("sweep_file", type=click.Path(dir_okay=False))
@click.option("--name", help="The model's name in tables and plots (default: its folder's name).")
@click.option("--objective", default="pretrained", show_default=True, help="What it was trained for.")
@store_option
@click.pass_context
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
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
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


@cli.command()
@click.argument("sweep_name", required=False)
@click.option("--format", "kind", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="export", show_default=True)
@store_option
@click.pass_context
def export(ctx: click.Context, sweep_name: str | None, kind: str, out_dir: str) -> None:
    """Write a sweep's trials, measurements, fits, forecasts, gaps, verdicts and every law of
    every fit (laws) as files pandas reads back whole (lists stay lists in Parquet).

    \b
        orch export goodview_vs_ntp --format parquet --out results/
        python -c "import pandas as pd; print(pd.read_parquet('results/measurements.parquet'))"
    """
    from fits.report import check_folder, unmake
    from orchestrator.export import export_tables, write_csv, write_parquet

    store, sweep_name = open_sweep(ctx, sweep_name)
    folder = Path(out_dir)
    try:
        made = check_folder(folder)
    except OSError as error:
        raise InputError(f"--out {out_dir}: cannot make the folder ({error.strerror or error})") from None
    write = write_csv if kind == "csv" else write_parquet
    staged: dict[Path, Path] = {}  # the final file -> its partial
    with sigterm_interrupts():
        try:
            for table in export_tables(store, sweep_name):
                path = folder / f"{table.name}.{kind}"
                staged[path] = path.with_name(f".{path.name}.partial")
                rows = write(table, staged[path])
                click.echo(f"{path}: {rows} rows", err=True)
            with held_signals():  # every table lands, or none: never a half-written file or set
                for path, partial in staged.items():
                    partial.replace(path)
        except BaseException as error:
            for partial in staged.values():
                partial.unlink(missing_ok=True)
            unmake(made)
            if isinstance(error, OSError):  # the disk filled up, the folder went away
                raise OrchError(
                    f"export to {folder} failed ({error.strerror or error}); nothing was written"
                ) from None
            raise
