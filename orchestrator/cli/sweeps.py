"""`orch sweep` and `orch status`: run a sweep, and read where it stands from the store."""

import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from db import mask_url
from fits.report.text import render_table
from foundation.sizes import format_size
from orchestrator.cli.common import (
    BudgetParam,
    FiniteRange,
    budget_flops,
    emit_json,
    json_option,
    open_store,
    store_exists,
    store_option,
    store_url,
    throughput_options,
)
from orchestrator.cli.group import cli
from orchestrator.errors import InputError
from orchestrator.run.storage import DEFAULT_STORAGE, storage_path
from orchestrator.sweepfile import load_spec

T = TypeVar("T")
MAX_ROUNDS, BATCH = 4, 4  # --until-decided: rounds at most, and runs a round
ROUNDS_CAP = 20  # past it, a look's level (99.8% at 20) widens every interval for a round few reach


def seconds_option(name: str, default: float, low: float, help: str) -> Callable[[T], T]:
    """A duration option: seconds from `low` to a day (a longer wait overflows the clock's
    timeout), its default shown."""
    return click.option(
        name, type=FiniteRange(min=low, max=86400), default=default, show_default=True, help=help
    )


@cli.command()
@click.argument("sweep_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--dry-run", is_flag=True, help="List the trials, totals and the design check; run nothing.")
@click.option(
    "--strict",
    is_flag=True,
    help="Refuse (exit 2, before any run) a design that can never decide one of its claims.",
)
@click.option(
    "--cluster-gpus",
    type=click.IntRange(min=1),
    default=None,
    help="With --dry-run: the plan's makespan on this many GPUs.",
)
@throughput_options("With --dry-run")
@json_option
@click.option("--max-concurrent", type=click.IntRange(min=1), default=None, help="Trials at once.")
@click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True)
@click.option("--address", default=None, help="An existing Ray cluster: auto or HOST:PORT.")
@seconds_option("--connect-timeout", 15, 0.1, "Seconds a cluster at --address has to answer.")
@click.option("--num-cpus", type=click.IntRange(min=1), default=None, help="CPUs for local Ray.")
@click.option(
    "--num-gpus",
    type=FiniteRange(min=0),
    default=None,
    help="GPUs local Ray offers (default: those it detects); fractional `resources` pack trials on one.",
)
@click.option(
    "--storage",
    envvar="ORCH_STORAGE",
    default=DEFAULT_STORAGE,
    show_default=True,
    help="Checkpoints and Ray's files: a path or file:// URI; on a cluster, one shared path for every node.",
)
@seconds_option(
    "--store-wait", 600, 0, "Seconds to wait out an unreachable store (rows are held in memory meanwhile)."
)
@click.option(
    "--pack/--no-pack",
    default=True,
    show_default=True,
    help="Run trials estimated under --pack-below seconds one after another in shared processes.",
)
@seconds_option("--pack-below", 60, 0, "Seconds under which a trial's estimated time packs it.")
@click.option(
    "--until-decided",
    is_flag=True,
    help="After the grid, run orch next's picks in rounds until every claim is decided, "
    "--budget is spent, --max-rounds have run or no run narrows an open claim.",
)
@click.option(
    "--budget",
    type=BudgetParam(),
    default=None,
    help="With --until-decided: what the rounds may spend, FLOPs (3e15) or GPU-hours (12gpu-h, "
    "at --peak-tflops and --mfu).",
)
@click.option(
    "--max-rounds",
    type=click.IntRange(min=1, max=ROUNDS_CAP),
    default=None,
    help=f"With --until-decided: rounds at most [default: {MAX_ROUNDS}; at most {ROUNDS_CAP}]; the looks "
    "share a 5% error rate, so each is judged at 1 - 5%/(rounds + 1).",
)
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=None,
    help=f"With --until-decided: runs a round at most [default: {BATCH}].",
)
@click.option(
    "--log",
    "log",
    multiple=True,
    metavar="BACKEND",
    help="Also log each trial to mlflow[=URI], tensorboard or wandb[=PROJECT] (repeatable; orch[tracking]).",
)
@store_option
@click.pass_context
def sweep(ctx: click.Context, sweep_file: str, as_json: bool, **flags: Any) -> None:
    """Run every trial of a sweep that the store does not have yet.

    \b
        orch sweep sweeps/goodview_vs_ntp.yaml
        orch sweep sweeps/goodview_vs_ntp_paper.yaml --dry-run --cluster-gpus 64
        orch sweep sweeps/goodview_vs_ntp.yaml --log mlflow --log tensorboard
    """
    from orchestrator.run.plan import check_widths

    strict = flags.pop("strict")
    loop = _loop_limits(flags)
    asked = SweepFlags(**flags)
    spec = load_spec(sweep_file)
    check_widths(spec)
    url = store_url(ctx, spec.store)
    from orchestrator.cli.dry_run import refuse_undecidable, show_plan

    if asked.dry_run:
        if loop is not None:
            raise InputError("--until-decided runs rounds: drop --dry-run (or --until-decided)")
        show_plan(spec, url, asked, as_json, strict)
        return
    refuse_undecidable(spec, strict)
    if loop is not None:
        _until_decided(ctx, spec, url, asked, loop, as_json)
        return
    from orchestrator.run.scheduler import run_sweep

    with contextlib.redirect_stdout(sys.stderr):  # Ray prints a cluster's errors (a lost node) to stdout
        outcome = run_sweep(spec, url, asked.sweep_options(progress=_to_stderr, live=sys.stderr.isatty()))
    if as_json:
        emit_json(outcome.as_dict())
    else:
        click.echo(outcome.summary())
    ctx.exit(outcome.exit_code)


@dataclass(frozen=True)
class SweepFlags:
    """`orch sweep`'s options, typed once: the dry run's GPU model, and how the sweep runs."""

    dry_run: bool
    cluster_gpus: int | None
    peak_tflops: float
    mfu: float
    max_concurrent: int | None
    retries: int
    address: str | None
    connect_timeout: float
    num_cpus: int | None
    num_gpus: float | None
    storage: str
    store_wait: float
    pack: bool
    pack_below: float
    log: tuple[str, ...]

    @property
    def pack_below_s(self) -> float:
        """Trials estimated under this many seconds share a process (0: none does)."""
        return self.pack_below if self.pack else 0.0

    def sweep_options(self, progress: Callable[[str], None], live: bool) -> Any:
        from orchestrator.run.scheduler import SweepOptions
        from orchestrator.run.tracking import parse_target

        return SweepOptions(
            max_concurrent=self.max_concurrent,
            retries=self.retries,
            address=self.address,
            connect_timeout_s=self.connect_timeout,
            num_cpus=self.num_cpus,
            num_gpus=self.num_gpus,
            storage=storage_path(self.storage),
            store_wait_s=self.store_wait,
            pack_below_s=self.pack_below_s,
            progress=progress,
            live=live,
            log=tuple(dict.fromkeys(parse_target(value) for value in self.log)),
        )


def _loop_limits(flags: dict[str, Any]) -> Any:
    """`--until-decided`'s limits, taken out of `flags` (None without it); its options alone are
    a mistake said in one line. A GPU-hour budget is FLOPs at --peak-tflops and --mfu."""
    from orchestrator.cli.until_decided import Limits
    from orchestrator.run.plan import Throughput

    until = flags.pop("until_decided")
    budget, rounds, batch = (flags.pop(name) for name in ("budget", "max_rounds", "batch"))
    if not until:
        given = [n for n, v in (("--budget", budget), ("--max-rounds", rounds), ("--batch", batch)) if v]
        if given:
            raise InputError(f"{', '.join(given)} limit the rounds of --until-decided: add --until-decided")
        return None
    flops = budget_flops(budget, Throughput(flags["peak_tflops"], flags["mfu"]))
    return Limits(flops, rounds or MAX_ROUNDS, batch or BATCH)


def _until_decided(
    ctx: click.Context, spec: Any, url: str, asked: SweepFlags, limits: Any, as_json: bool
) -> None:
    """The grid, then rounds until the claims are decided (`orchestrator.cli.until_decided`)."""
    from orchestrator.cli.until_decided import loop_text, run_until_decided
    from orchestrator.run.plan import Throughput

    if not spec.claims:
        raise InputError(
            f"{spec.source}: states no claims, so --until-decided has nothing to decide "
            "(name a claims file: claims: FILE)"
        )
    options = asked.sweep_options(progress=_to_stderr, live=sys.stderr.isatty())
    with contextlib.redirect_stdout(sys.stderr):
        loop, outcome = run_until_decided(
            spec, url, options, limits, Throughput(asked.peak_tflops, asked.mfu)
        )
    if as_json:
        emit_json(loop.as_dict() | {"last_sweep": outcome.as_dict()})
    elif loop.stop is None:
        click.echo(outcome.summary())
    else:
        click.echo(loop_text(loop))
    ctx.exit(outcome.exit_code)


def _to_stderr(text: str) -> None:
    """Where a sweep's progress goes: stderr, flushed (stdout is data)."""
    sys.stderr.write(text)
    sys.stderr.flush()


@cli.command()
@click.argument("sweep_name", required=False)
@json_option
@click.option(
    "--watch",
    is_flag=True,
    help="Refresh the counts, each curve's newest value with its SE and the claims' intervals until "
    "no trial is active.",
)
@seconds_option("--every", 10, 0.1, "With --watch: seconds between refreshes.")
@seconds_option("--refit-every", 60, 0, "With --watch: the claims are refitted at most this often.")
@store_option
@click.pass_context
def status(
    ctx: click.Context, sweep_name: str | None, as_json: bool, watch: bool, every: float, refit_every: float
) -> None:
    """Show each trial's state and progress from the store (safe while a sweep runs). SWEEP is a
    sweep's name, or its file (then the file's store is read, as `orch sweep FILE` wrote it).

    \b
        orch status
        orch status goodview_vs_ntp --json
        orch status sweeps/goodview_vs_ntp.yaml
        orch status sweeps/goodview_vs_ntp.yaml --watch
    """
    from orchestrator.run.status import counts_line, sweep_status

    store, known, sweep_name = _status_store(ctx, sweep_name)
    if watch:
        if as_json:
            raise InputError("--watch shows frames for people: drop --json (orch status --json reads once)")
        from orchestrator.cli.watch import watch_sweep

        if not known:
            raise InputError(f"no sweeps in {store.url} (run 'orch sweep FILE' first)")
        try:
            watch_sweep(store, sweep_name or known[-1], every, refit_every)
        except KeyboardInterrupt:
            ctx.exit(130)
        return
    statuses = [sweep_status(store, name) for name in ([sweep_name] if sweep_name else known)]
    if as_json:
        emit_json({"store": store.url, "sweeps": statuses})
        return
    if not statuses:
        click.echo(f"no sweeps in {store.url}", err=True)
    for entry in statuses:
        click.echo(f"sweep {entry['name']}: " + counts_line(entry["totals"]))
        click.echo(_trials_table(entry["trials"]))


def _status_store(ctx: click.Context, sweep_name: str | None) -> tuple[Any, list[str], str | None]:
    """(the store, its sweeps, the sweep asked for): SWEEP a name, or a sweep file whose store
    is read; a store that does not exist is never created to be read."""
    spec_store = None
    if sweep_name and sweep_name.endswith((".yaml", ".yml")):  # a sweep file: its name and store
        spec = load_spec(sweep_name)
        sweep_name, spec_store = spec.name, spec.store
    url = store_url(ctx, spec_store)
    if not store_exists(url):
        raise InputError(f"store {mask_url(url)} does not exist (run 'orch sweep FILE' first)")
    store = open_store(url)
    known = store.sweep_names()
    if sweep_name and sweep_name not in known:
        raise InputError(
            f"sweep {sweep_name!r} is not in {mask_url(url)} (sweeps there: {', '.join(known) or 'none'})"
        )
    return store, known, sweep_name


def _trials_table(trials: list[dict]) -> str:
    """The trials, with the images each data size sees where the pairs file records it."""
    images = any(t["images"] is not None for t in trials)
    headers = ["key", "objective", "model", "data_size", *(["images"] if images else [])]
    headers += ["seed", "status", "progress", "attempts", "reason"]
    return render_table(
        headers,
        [
            [
                t["key"][:10],
                t["objective"],
                t["model"],
                format_size(t["data_size"]),
                *(["-" if t["images"] is None else f"{t['images']:,}"] if images else []),
                t["seed"],
                t["status"],
                f"{100 * t['progress']:.0f}%",
                t["attempts"],
                t["reason"] or "",
            ]
            for t in trials
        ],
    )
