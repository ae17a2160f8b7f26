"""`orch import` and `orch export`: runs orch did not train into the store, and a sweep's tables out of it."""

import hashlib
import re
from dataclasses import replace
from pathlib import Path

import click
import yaml

from db import WIDTHS
from orchestrator.cli.common import (
    SizeParam,
    open_store,
    open_sweep,
    points_option,
    say,
    store_option,
    store_url,
)
from orchestrator.cli.group import cli
from orchestrator.cli.heartbeat import doing, working
from orchestrator.errors import InputError, OrchError
from orchestrator.interrupts import held_signals


@cli.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--sweep", "sweep_name", required=True, help="The sweep the runs are recorded as.")
@points_option(
    "What `orch fit` takes of each run: its final checkpoint, or every checkpoint (constant-rate "
    "runs); auto: every checkpoint when each run is one (objective, model, seed) with several."
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
@working
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
    from orchestrator.imports import Clock, read_runs
    from orchestrator.imports.provenance import pooled_sources
    from orchestrator.sweepfile.claims import load_claims
    from orchestrator.sweepfile.imported import imported_design, keeping_claims

    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", sweep_name):
        raise InputError(f"--sweep {sweep_name!r}: use letters, digits, '_', '.' and '-'")
    if claims_file is not None:
        load_claims(claims_file)  # a bad claims file is refused before anything is written
    doing(f"reading and checking {file}")
    runs = read_runs(Path(file), sweep_name, WIDTHS, points, holdout_above, claims_file, notify=say)
    store = open_store(store_url(ctx), create=True)
    found = store.find_sweep(sweep_name)
    if found is not None and imported_design(yaml.safe_load(found.spec_text)) is None:
        raise InputError(
            f"sweep {sweep_name} in {store.url} was run by orch sweep: import under another --sweep"
        )
    if found is not None and (changed := runs.changed(store.measurements_frame(sweep_name), Path(file))):
        raise InputError(f"{changed}; nothing was imported: import the new file under another --sweep")
    if found is not None:
        runs = replace(runs, spec_text=keeping_claims(runs.spec_text, found.spec_text))
    keys, total = [trial.key for trial in runs.trials], len(runs.cells)
    doing(f"writing {total:,} rows of {len(keys):,} trials to {store.url}")
    added, written, clock = 0, 0, Clock()
    with store.batch():  # the sweep, its trials and every row land together, or nothing does
        store.record_sweep(
            sweep_name, runs.spec_text, hashlib.sha256(runs.spec_text.encode()).hexdigest(), file, runs.trials
        )
        new = [key for key, status in store.trial_statuses(keys).items() if status == TrialStatus.PENDING]
        store.finish_imported([(key, runs.samples_seen[key], runs.n_params.get(key)) for key in new])
        for batch in runs.measurements():
            added, written = added + store.write_measurements(batch), written + len(batch)
            if clock.due():
                say(f"{written:,} of {total:,} rows written (committed together at the end)")
    click.echo(
        f"{sweep_name}: {len(new)} of {len(keys)} trials and {added} of {total} rows added "
        f"to {store.url} (points: {yaml.safe_load(runs.spec_text)['imported']['points']})",
        err=True,
    )
    for line in pooled_sources(store.trials_frame(sweep_name)):
        say(f"note: {line}")


@cli.command()
@click.argument("sweep_name", required=False)
@click.option("--format", "kind", type=click.Choice(["csv", "parquet"]), default="csv", show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="export", show_default=True)
@store_option
@click.pass_context
@working
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
