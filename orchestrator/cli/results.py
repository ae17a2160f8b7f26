"""`orch fit` and `orch report`: laws fitted to the measurements, forecasts, gaps, the report."""

import math
from typing import Any

import click

from db import Store
from orchestrator.cli.common import SizeParam, did_you_mean, emit_json, open_sweep, store_option
from orchestrator.cli.group import cli
from orchestrator.errors import InputError
from orchestrator.render import render_table
from orchestrator.spec.sizes import format_size


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
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="reports", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@store_option
@click.pass_context
def fit(ctx: click.Context, sweep_name: str | None, as_json: bool, **options: Any) -> None:
    """Fit alignment-versus-samples laws, forecast, score held-out cells and compute gaps.

    \b
        orch fit --predict 900M
        orch fit goodview_vs_ntp --gap jepa_good:ntp --at 256K
    """
    from fits.solve import HUBER_DELTA

    huber, delta = options.pop("huber"), options.pop("huber_delta")
    result = _fit(ctx, sweep_name, huber=delta or (HUBER_DELTA if huber else None), **options)
    if as_json:
        emit_json(result.as_dict())
    else:
        click.echo(_fit_text(result))
    click.echo(f"wrote {result.report_path}", err=True)


@cli.command()
@click.argument("sweep_name", required=False)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="reports", show_default=True)
@store_option
@click.pass_context
def report(ctx: click.Context, sweep_name: str | None, out_dir: str) -> None:
    """Fit with the sweep file's defaults and write the report: report.html (open it in a
    browser; it needs nothing else), report.md and the plots, in OUT/<sweep>/<fit id>/.

    \b
        orch report goodview_vs_ntp
        xdg-open reports/goodview_vs_ntp/latest/report.html
    """
    click.echo(_fit(ctx, sweep_name, out_dir=out_dir).report_path)


def _fit(ctx: click.Context, sweep_name: str | None, **options: Any) -> Any:
    """The options checked against what the sweep measured, then one fit run."""
    from fits.fit import FitError
    from fits.results import FitOptions
    from fits.run import run_fit

    store, sweep_name = open_sweep(ctx, sweep_name)
    chosen = FitOptions(**options)
    _check(store, sweep_name, chosen)
    try:
        return run_fit(store, sweep_name, chosen)
    except FitError as error:
        raise InputError(str(error)) from None


def _check(store: Store, sweep: str, options: Any) -> None:
    """Every option names something the sweep has: one line with the valid values if not."""
    from fits.load import metric_span, recipes_of
    from orchestrator.spec.catalog import parse_metric

    trials = store.trials_frame(sweep)
    objectives = sorted(set(trials.objective))
    for pair in options.gaps:
        names = pair.split(":")
        if len(names) != 2 or not all(names):
            raise InputError(
                f"--gap {pair!r}: write A:B, two objectives of the sweep ({', '.join(objectives)})"
            )
        for name in names:
            if name not in objectives:
                hint = did_you_mean(name, objectives)
                raise InputError(
                    f"--gap {pair}: {name!r} is not an objective of {sweep}{hint} ({', '.join(objectives)})"
                )
    try:
        parse_metric(options.metric.split("/")[0])
    except ValueError as error:
        raise InputError(f"--metric {error}") from None
    low, high = metric_span(options.metric)
    level = options.at_alignment
    if level is not None and not (math.isfinite(level) and low < level < high):
        raise InputError(
            f"--at-alignment {level}: give a level inside {options.metric}'s range ({low:g}, {high:g})"
        )
    measured = store.measured(sweep)
    for flag, value, column in (("--metric", options.metric, 0), ("--reference", options.reference, 1)):
        known = sorted({pair[column] for pair in measured})
        if value is not None and known and value not in known:
            hint = did_you_mean(value, known)
            raise InputError(
                f"{flag} {value!r} was not measured in {sweep}{hint} (measured: {', '.join(known)})"
            )
    sizes = sorted(set(trials.data_size))
    for size in options.holdout:
        if size not in sizes:
            listed = ", ".join(format_size(s) for s in sizes)
            raise InputError(f"--holdout {format_size(size)} is not a data size of {sweep} ({listed})")
    decaying = {o for o, train in recipes_of(trials).items() if train["schedule"] != "constant"}
    if options.points == "all" and decaying:
        objectives = ", ".join(sorted(decaying))
        click.echo(
            f"orch: warning: --points all on runs whose learning rate decays ({objectives}): a "
            "checkpoint before the end of its schedule is not what a run of that size would reach; "
            "each trial's final checkpoint (--points final) is the curve",
            err=True,
        )


def _fit_text(result: Any) -> str:
    from fits.report.markdown import calibration_line, sections

    parts = [f"{title}\n{render_table(headers, rows)}" for title, headers, rows in sections(result) if rows]
    parts += [line] if (line := calibration_line(result)) else []
    parts += [f"skipped {line}" for line in result.skipped]
    return "\n\n".join(parts)
