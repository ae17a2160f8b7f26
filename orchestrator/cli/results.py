"""`orch fit`, `orch align`, `orch baselines` and `orch db`: what is done with measurements."""

from pathlib import Path
from typing import Any

import click

from db import SCHEMA_VERSION, Store, mask_url
from orchestrator.cli.common import SizeParam, emit_json, store_exists, store_url
from orchestrator.cli.group import cli
from orchestrator.errors import InputError
from orchestrator.render import render_table


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
@click.option("--clamp/--no-clamp", default=True, help="Clamp |x| at its 95th percentile first.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def align(features_a: str, features_b: str, metrics: tuple[str, ...], clamp: bool, as_json: bool) -> None:
    """Score the alignment of two row-paired feature files (.npy, or .npz with one array a layer).

    Retrieval metrics fit the A -> B map on the first half of the rows and score the second.

    \b
        orch align text.npy dinov2.npy --metric mutual_knn@10 --metric cka
    """
    from orchestrator.features import score_files

    rows = score_files(Path(features_a), Path(features_b), metrics, clamp)
    if as_json:
        emit_json({"a": features_a, "b": features_b, "scores": rows})
        return
    headers = ["metric", "value", "layer_a", "layer_b"]
    click.echo(render_table(headers, [[r[h] for h in headers] for r in rows]))


@cli.group()
def db() -> None:
    """The store itself."""


@db.command("upgrade")
@click.pass_context
def db_upgrade(ctx: click.Context) -> None:
    """Bring a store written by an older orch to this orch's schema, in place, keeping every row.

    \b
        orch --store sqlite:///orch.db db upgrade
    """
    url = store_url(ctx)
    if not store_exists(url):
        raise InputError(f"store {mask_url(url)} does not exist (nothing to upgrade)")
    store = Store.open(url, upgrade=True)
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
@click.pass_context
def baselines_import(ctx: click.Context, csv_file: str) -> None:
    """Store the rows of a published-results CSV (idempotent: importing twice adds nothing).

    \b
        orch baselines import sweeps/published/jepa_prh.csv
    """
    from orchestrator.baselines import read_baselines

    rows = read_baselines(Path(csv_file))
    store = Store.open(store_url(ctx))
    added = store.write_baselines(rows)
    click.echo(f"{added} of {len(rows)} rows added to {store.url}", err=True)


@cli.command()
@click.argument("sweep_name", required=False)
@click.option("--predict", "predict", multiple=True, type=SizeParam(), help="Forecast at S.")
@click.option("--holdout", multiple=True, type=SizeParam(), help="Data sizes to hold out.")
@click.option("--gap", "gaps", multiple=True, help="A:B, e.g. jepa_good:ntp.")
@click.option("--at", "gap_at", type=SizeParam(), default=None, help="The gap at B's S.")
@click.option("--at-alignment", type=float, default=None, help="The gap at this alignment.")
@click.option("--metric", default="mutual_knn@10", show_default=True)
@click.option("--reference", default=None, help="Reference to fit (default: every one).")
@click.option("--min-samples", type=SizeParam(), default=None, help="Leave out S below this.")
@click.option(
    "--bootstrap",
    type=click.IntRange(min=0),
    default=0,
    help="Seed-bootstrap refits of every law (whole runs resampled) for bands and gaps; 0: parametric.",
)
@click.option(
    "--huber", is_flag=True, help="Huber's loss on log residuals: one diverged seed barely moves a fit."
)
@click.option(
    "--huber-delta",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Huber's delta in log units (implies --huber; default 0.01).",
)
@click.option(
    "--points",
    type=click.Choice(["auto", "final", "all"]),
    default="auto",
    show_default=True,
    help="Each trial's final checkpoint (one run per size), every checkpoint (constant-lr runs), "
    "or auto: every checkpoint when the sweep's runs have a constant learning rate.",
)
@click.option(
    "--holdout-above",
    type=SizeParam(),
    default=None,
    help="Hold out checkpoints past S (default: the sweep file's holdout.samples_above).",
)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="reports")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def fit(ctx: click.Context, sweep_name: str | None, as_json: bool, **options: Any) -> None:
    """Fit alignment-versus-samples laws, forecast, score held-out cells and compute gaps.

    \b
        orch fit --predict 900M
        orch fit goodview_vs_ntp --gap jepa_good:ntp --at 256K
    """
    from fits.fit import FitError
    from fits.results import FitOptions
    from fits.run import run_fit
    from fits.solve import HUBER_DELTA

    url = store_url(ctx)
    if not store_exists(url):
        raise InputError(f"store {mask_url(url)} does not exist (run 'orch sweep FILE' first)")
    store = Store.open(url)
    names = store.sweep_names()
    if sweep_name is None:
        if not names:
            raise InputError(f"no sweeps in {store.url} (run 'orch sweep FILE' first)")
        sweep_name = names[-1]
    elif sweep_name not in names:
        raise InputError(f"sweep {sweep_name!r} is not in {store.url} (sweeps: {', '.join(names)})")
    try:
        huber, delta = options.pop("huber"), options.pop("huber_delta")
        huber = delta or (HUBER_DELTA if huber else None)
        result = run_fit(store, sweep_name, FitOptions(**options, huber=huber))
    except FitError as error:
        raise InputError(str(error)) from None
    if as_json:
        emit_json(result.as_dict())
    else:
        click.echo(_fit_text(result))
    click.echo(f"wrote {result.report_path}", err=True)


def _fit_text(result: Any) -> str:
    from fits.report.markdown import calibration_line, sections

    parts = [f"{title}\n{render_table(headers, rows)}" for title, headers, rows in sections(result) if rows]
    parts += [line] if (line := calibration_line(result)) else []
    parts += [f"skipped {line}" for line in result.skipped]
    return "\n\n".join(parts)
