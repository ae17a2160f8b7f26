"""`orch fit` and `orch report`: laws fitted to the measurements, forecasts, gaps, the report.

The fit itself lives in `fits`; here the sweep's recorded file is read into the `SweepDesign`
the fit needs, and the run is reported and stored."""

from pathlib import Path
from typing import Any

import click

from orchestrator.cli.common import (
    SizeParam,
    emit_json,
    json_option,
    open_sweep,
    points_option,
    store_option,
)
from orchestrator.cli.group import cli
from orchestrator.cli.heartbeat import doing, working
from orchestrator.cli.judging import sweep_design
from orchestrator.cli.run_text import fit_text
from orchestrator.errors import InputError
from orchestrator.interrupts import held_signals


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
    "--profile",
    is_flag=True,
    help="lmfit's profile-likelihood intervals for the heaviest laws' ceiling and exponents, beside "
    "the covariance intervals.",
)
@points_option(
    "Each trial's final checkpoint (one run per size), every checkpoint (constant-lr runs), "
    "or auto: every checkpoint when the sweep's runs have a constant learning rate."
)
@click.option(
    "--holdout-above",
    type=SizeParam(),
    default=None,
    help="Hold out checkpoints past S (default: the sweep file's holdout.samples_above).",
)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="reports", show_default=True)
@click.option(
    "--detail", is_flag=True, help="Every law of every curve and every table, not only the summary."
)
@json_option
@store_option
@click.pass_context
@working
def fit(ctx: click.Context, sweep_name: str | None, as_json: bool, detail: bool, **options: Any) -> None:
    """Fit alignment-versus-samples laws, forecast, score held-out cells and compute gaps.

    \b
        orch fit --predict 900M
        orch fit goodview_vs_ntp --gap jepa_good:ntp --at 256K
    """
    from fits.curve.solve import HUBER_DELTA

    huber, delta = options.pop("huber"), options.pop("huber_delta")
    run, page = _fit(ctx, sweep_name, huber=delta or (HUBER_DELTA if huber else None), **options)
    if as_json:
        emit_json(run.as_dict() | {"report": str(page)})
    else:
        click.echo(fit_text(run, detail))
    click.echo(f"wrote {page}", err=True)


@cli.command()
@click.argument("sweep_name", required=False)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="reports", show_default=True)
@store_option
@click.pass_context
@working
def report(ctx: click.Context, sweep_name: str | None, out_dir: str) -> None:
    """Fit with the sweep file's defaults and write the report: report.html (open it in a
    browser; it needs nothing else), report.md and the plots, in OUT/<sweep>/<fit id>/.

    \b
        orch report goodview_vs_ntp
        xdg-open reports/goodview_vs_ntp/latest/report.html
    """
    click.echo(_fit(ctx, sweep_name, out_dir=out_dir)[1])


def _fit(ctx: click.Context, sweep_name: str | None, out_dir: str, **options: Any) -> tuple[Any, Path]:
    """One fit run of the sweep, stored and reported whole or not at all; (run, report.html).

    The report folder is checked before fitting; the report is written to a staging folder;
    only then is it placed, the run stored and `latest` pointed at it, with Ctrl-C and SIGTERM
    held back; any failure or interrupt before that leaves neither folder nor rows."""
    from fits.curve.settings import FitOptions
    from fits.report import check_folder, stage_report, unmake
    from fits.run.fit_run import run_fit
    from fits.run.load import save_fit_run

    store, sweep_name = open_sweep(ctx, sweep_name)
    folder = Path(out_dir) / sweep_name
    try:
        made = check_folder(folder)
    except OSError as error:
        raise InputError(f"--out {out_dir}: cannot write a report in {folder} ({_why(error)})") from None
    chosen = FitOptions(**options)
    try:
        doing(f"fitting the laws of sweep {sweep_name}")
        run = run_fit(store, sweep_name, chosen, *sweep_design(store, sweep_name, chosen.metric))
        for warning in run.warnings:
            click.echo(f"orch: warning: {warning}", err=True)
        doing(f"writing the report of sweep {sweep_name}")
        staged = stage_report(run, folder)
    except BaseException:
        unmake(made)  # a bad option or an interrupt leaves no folder behind
        raise
    try:
        with held_signals():
            page = staged.place()
            save_fit_run(store, run)
            staged.point_latest()
    except BaseException:
        staged.discard()
        unmake(made)
        raise
    return run, page


def _why(error: OSError) -> str:
    return error.strerror or type(error).__name__
