"""The `orch` command line: stdout is data, stderr is progress; bad input exits 2, failures 1."""

import json
import sys
from pathlib import Path
from typing import Any

import click

from db import SCHEMA_VERSION, Store, StoreError, StoreURLError, mask_url
from orchestrator import __version__
from orchestrator.errors import InputError, OrchError
from orchestrator.render import render_table
from orchestrator.spec import DEFAULT_STORE, load_spec
from orchestrator.spec.sizes import SizeError, format_size, parse_size

__all__ = ["cli", "main"]

EXIT_INPUT, EXIT_FAILURE, EXIT_INTERRUPTED = 2, 1, 130


def _store_url(ctx: click.Context, spec_store: str | None = None) -> str:
    """--store, then ORCH_STORE (click reads both into the option), then the sweep file's store."""
    return ctx.obj["store"] or spec_store or DEFAULT_STORE


def _emit_json(payload: Any) -> None:
    click.echo(json.dumps(payload, indent=2, sort_keys=True, default=str))


class SizeParam(click.ParamType):
    name = "size"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        try:
            return parse_size(value)
        except SizeError as error:
            self.fail(str(error), param, ctx)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="orch")
@click.option(
    "--store",
    envvar="ORCH_STORE",
    default=None,
    metavar="URL",
    help="Store URL (sqlite:///orch.db, postgresql+psycopg://user@host/db); env ORCH_STORE. "
    "Default: the sweep file's store, else sqlite:///orch.db.",
)
@click.pass_context
def cli(ctx: click.Context, store: str | None) -> None:
    """Run alignment-scaling sweeps, record every checkpoint, fit and check the laws.

    \b
        orch sweep sweeps/goodview_vs_ntp.yaml
        orch fit --predict 900M
    """
    ctx.obj = {"store": store}


@cli.command()
@click.argument("sweep_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--dry-run", is_flag=True, help="List the trials and totals; run nothing.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--max-concurrent", type=click.IntRange(min=1), default=None, help="Trials at once.")
@click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True)
@click.option("--address", default=None, help="An existing Ray cluster: auto or HOST:PORT.")
@click.option("--num-cpus", type=click.IntRange(min=1), default=None, help="CPUs for local Ray.")
@click.pass_context
def sweep(
    ctx: click.Context,
    sweep_file: str,
    dry_run: bool,
    as_json: bool,
    max_concurrent: int | None,
    retries: int,
    address: str | None,
    num_cpus: int | None,
) -> None:
    """Run every trial of a sweep that the store does not have yet.

    \b
        orch sweep sweeps/goodview_vs_ntp.yaml
        orch sweep sweeps/goodview_vs_ntp_paper.yaml --dry-run
    """
    from orchestrator.run.plan import plan, totals

    spec = load_spec(sweep_file)
    url = _store_url(ctx, spec.store)
    if dry_run:
        rows = plan(spec, _known_statuses(url, [t.key for t in spec.trials]))
        summary = totals(rows)
        if as_json:
            _emit_json({"sweep": spec.name, "store": mask_url(url), "trials": rows, "totals": summary})
        else:
            click.echo(_plan_table(rows))
            click.echo(
                f"\n{summary['trials']} trials, {format_size(summary['samples'])} samples, "
                f"~{summary['flops_est']:.3g} training FLOPs (estimated); "
                + ", ".join(f"{n} {state}" for state, n in sorted(summary["by_state"].items()))
            )
        return
    from orchestrator.run.scheduler import SweepOptions, run_sweep

    options = SweepOptions(
        max_concurrent=max_concurrent,
        retries=retries,
        address=address,
        num_cpus=num_cpus,
        progress=_to_stderr,
        live=sys.stderr.isatty(),
    )
    outcome = run_sweep(spec, url, options)
    if as_json:
        _emit_json(outcome.as_dict())
    else:
        click.echo(outcome.summary())
    ctx.exit(outcome.exit_code)


def _to_stderr(text: str) -> None:
    """Where a sweep's progress goes: stderr, flushed (stdout is data)."""
    sys.stderr.write(text)
    sys.stderr.flush()


def _known_statuses(url: str, keys: list[str]) -> dict[str, str]:
    """Trial states for a dry run; an absent store means all new, an unreachable one unknown."""
    if not _store_exists(url):
        return {}
    try:
        return Store.open(url).trial_statuses(keys)
    except StoreURLError:
        raise
    except StoreError as error:
        click.echo(f"orch: warning: {error}; trial states unknown", err=True)
        return dict.fromkeys(keys, "unknown")


def _store_exists(url: str) -> bool:
    """A dry run must not create a SQLite file just to find out it is empty."""
    if not url.startswith("sqlite"):
        return True
    from sqlalchemy.engine import make_url

    database = make_url(url).database
    return bool(database) and (database == ":memory:" or Path(database).exists())


def _plan_table(rows: list[dict]) -> str:
    has_recipe = any(row["recipe"] for row in rows)
    headers = ["objective", "model", "params", "data_size", "seed"]
    headers += ["recipe"] if has_recipe else []
    headers += ["held_out", "key", "state"]
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
        line += ["yes" if row["held_out"] else "", row["key"][:10], row["state"]]
        body.append(line)
    return render_table(headers, body)


@cli.command()
@click.argument("sweep_name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def status(ctx: click.Context, sweep_name: str | None, as_json: bool) -> None:
    """Show each trial's state and progress from the store (safe while a sweep runs).

    \b
        orch status
        orch status goodview_vs_ntp --json
    """
    from orchestrator.run.status import sweep_status

    url = _store_url(ctx)
    store = Store.open(url) if _store_exists(url) else None  # never create a store to read it
    known = store.sweep_names() if store else []
    if sweep_name and sweep_name not in known:
        raise InputError(
            f"sweep {sweep_name!r} is not in {mask_url(url)} (sweeps there: {', '.join(known) or 'none'})"
        )
    statuses = [sweep_status(store, name) for name in ([sweep_name] if sweep_name else known)]
    if as_json:
        _emit_json({"store": mask_url(url), "sweeps": statuses})
        return
    if not statuses:
        click.echo(f"no sweeps in {mask_url(url)}", err=True)
    for entry in statuses:
        click.echo(f"sweep {entry['name']}: " + _counts_line(entry["totals"]))
        headers = ["key", "objective", "model", "data_size", "seed", "status", "progress"]
        headers += ["attempts", "reason"]
        click.echo(
            render_table(
                headers,
                [
                    [
                        t["key"][:10],
                        t["objective"],
                        t["model"],
                        format_size(t["data_size"]),
                        t["seed"],
                        t["status"],
                        f"{100 * t['progress']:.0f}%",
                        t["attempts"],
                        t["reason"] or "",
                    ]
                    for t in entry["trials"]
                ],
            )
        )


def _counts_line(totals: dict) -> str:
    counts = ", ".join(f"{n} {state}" for state, n in sorted(totals["by_status"].items()))
    return f"{totals['trials']} trials ({counts}), {100 * totals['progress']:.0f}% of samples"


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

    \b
        orch align text.npy dinov2.npy --metric mutual_knn@10 --metric cka
    """
    from orchestrator.features import score_files

    rows = score_files(Path(features_a), Path(features_b), metrics, clamp)
    if as_json:
        _emit_json({"a": features_a, "b": features_b, "scores": rows})
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
    url = _store_url(ctx)
    if not _store_exists(url):
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
    store = Store.open(_store_url(ctx))
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
@click.option("--bootstrap", type=click.IntRange(min=0), default=0, help="Seed-bootstrap refits for bands.")
@click.option(
    "--points",
    type=click.Choice(["final", "all"]),
    default="final",
    show_default=True,
    help="Each trial's final checkpoint (one run per size), or every checkpoint (constant-lr runs).",
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

    url = _store_url(ctx)
    if not _store_exists(url):
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
        result = run_fit(store, sweep_name, FitOptions(**options))
    except FitError as error:
        raise InputError(str(error)) from None
    if as_json:
        _emit_json(result.as_dict())
    else:
        click.echo(_fit_text(result))
    click.echo(f"wrote {result.report_path}", err=True)


def _fit_text(result: Any) -> str:
    from fits.report.markdown import calibration_line, sections

    parts = [f"{title}\n{render_table(headers, rows)}" for title, headers, rows in sections(result) if rows]
    parts += [line] if (line := calibration_line(result)) else []
    parts += [f"skipped {line}" for line in result.skipped]
    return "\n\n".join(parts)


def main() -> None:
    """Entry point: turn our errors into one line on stderr and an exit code, never a traceback."""
    try:
        code = cli.main(standalone_mode=False)
    except click.ClickException as error:
        error.show()
        code = error.exit_code
    except click.exceptions.Abort:
        click.echo("orch: interrupted", err=True)
        code = EXIT_INTERRUPTED
    except KeyboardInterrupt:
        click.echo("orch: interrupted", err=True)
        code = EXIT_INTERRUPTED
    except (InputError, StoreURLError) as error:
        click.echo(f"orch: error: {error}", err=True)
        code = EXIT_INPUT
    except (OrchError, StoreError) as error:
        click.echo(f"orch: error: {error}", err=True)
        code = EXIT_FAILURE
    sys.exit(code or 0)
