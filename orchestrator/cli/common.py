"""What every command shares: the store URL it resolves, JSON output, the size option type."""

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from foundation.errors import did_you_mean
from foundation.sizes import SizeError, parse_size
from orchestrator.cli.heartbeat import note_said
from orchestrator.errors import InputError
from orchestrator.sweepfile import DEFAULT_STORE

__all__ = [
    "FiniteRange",
    "SizeParam",
    "claims_targets",
    "emit_json",
    "json_option",
    "open_store",
    "open_sweep",
    "points_option",
    "say",
    "store_exists",
    "store_option",
    "store_url",
]


def store_url(ctx: click.Context, spec_store: str | None = None) -> str:
    """--store, then ORCH_STORE (click reads both into the option), then the sweep file's store."""
    return ctx.obj["store"] or spec_store or DEFAULT_STORE


def store_option(command: Any) -> Any:
    """--store after the subcommand too (`orch fit --store URL`): it overrides the group's."""

    def remember(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is not None:
            ctx.obj["store"] = value

    return click.option(
        "--store", metavar="URL", expose_value=False, callback=remember, help="Store URL (as orch --store)."
    )(command)


json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
claims_targets = click.argument("targets", nargs=-1, metavar="[CLAIMS.yaml] [SWEEP]")


def points_option(help: str) -> Any:
    """--points auto|final|all: which measurements are a curve's points."""
    choices = click.Choice(["auto", "final", "all"])
    return click.option("--points", type=choices, default="auto", show_default=True, help=help)


def throughput_options(scope: str) -> Callable[[Any], Any]:
    """--peak-tflops and --mfu: the GPU model GPU-hours are estimated with (`scope`: when they
    apply, e.g. "With --dry-run"), one model for the dry run and orch next."""

    def add(command: Any) -> Any:
        mfu = click.option(
            "--mfu",
            type=FiniteRange(min=0, max=1, min_open=True),
            default=0.40,
            show_default=True,
            help=f"{scope}: the fraction of the peak a training step reaches.",
        )
        peak = click.option(
            "--peak-tflops",
            type=FiniteRange(min=0, min_open=True),
            default=989.0,
            show_default=True,
            help=f"{scope}: a GPU's dense bf16 peak (H100/H200: 989; A100: 312).",
        )
        return peak(mfu(command))

    return add


def say(text: str) -> None:
    """A line on stderr, as every notice of a command is (stdout is data)."""
    click.echo(f"orch: {text}", err=True)
    note_said()


def open_store(url: str, create: bool = False, upgrade: bool = False) -> Any:
    """The store at `url`, its long waits said on stderr; a reader (`create` false) never
    creates one, and a database that is not orch's is refused before anything is written. Its
    engine is disposed of when the command ends, so a process may run commands one after another."""
    from db import Store

    store = Store.open(url, upgrade=upgrade, create=create, notify=say)
    context = click.get_current_context(silent=True)
    if context is not None:
        context.call_on_close(store.close)
    return store


def open_sweep(ctx: click.Context, name: str | None) -> tuple[Any, str]:
    """(store, sweep name) for a command that reads results: the named sweep, else the newest,
    said on stderr where the store holds several."""
    from db import mask_url

    url = store_url(ctx)
    if not store_exists(url):
        raise InputError(f"store {mask_url(url)} does not exist (run 'orch sweep FILE' first)")
    store = open_store(url)
    names = store.sweep_names()
    if not names:
        raise InputError(f"no sweeps in {store.url} (run 'orch sweep FILE' first)")
    if name is not None and name not in names:
        raise InputError(
            f"sweep {name!r} is not in {store.url}{did_you_mean(name, names)} (sweeps: {', '.join(names)})"
        )
    if name is None and len(names) > 1:  # said first: which of several the command reads
        say(f"sweep {names[-1]}: the newest of {len(names)} in {store.url} (name one: {', '.join(names)})")
    return store, name or names[-1]


def emit_json(payload: Any) -> None:
    """Valid JSON on stdout: a NaN or an infinity (an untestable backtest, say) is null."""
    click.echo(json.dumps(_finite(payload), indent=2, sort_keys=True, default=str, allow_nan=False))


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


class FiniteRange(click.FloatRange):
    """click's FloatRange, without NaN and the infinities: NaN passes every comparison a range
    makes, and a NaN budget or timeout would be taken without a word."""

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class BudgetParam(click.ParamType):
    """A compute budget: FLOPs (`3e15`) or GPU-hours (`12gpu-h`), as (amount, "flops" | "gpu-h")."""

    name = "flops|Ngpu-h"

    def convert(self, value: Any, param: Any, ctx: Any) -> tuple[float, str]:
        if isinstance(value, tuple):
            return value
        text = str(value).strip().lower()
        unit = "gpu-h" if text.endswith("gpu-h") else "flops"
        number = text.removesuffix("gpu-h").strip()
        try:
            amount = float(number)
        except ValueError:
            self.fail(f"{value!r} is not FLOPs (3e15) or GPU-hours (12gpu-h)", param, ctx)
        if not math.isfinite(amount) or amount <= 0:
            self.fail(f"{value!r} is not a positive finite budget", param, ctx)
        return amount, unit


def budget_flops(budget: tuple[float, str] | None, throughput: Any) -> float | None:
    """A `BudgetParam` in FLOPs: GPU-hours at `throughput`'s FLOPs a GPU-hour (the dry run's)."""
    if budget is None:
        return None
    amount, unit = budget
    return amount if unit == "flops" else amount / throughput.gpu_hours(1.0)


class SizeParam(click.ParamType):
    name = "size"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        try:
            return parse_size(value)
        except SizeError as error:
            self.fail(str(error), param, ctx)


def store_exists(url: str) -> bool:
    """A dry run must not create a SQLite file just to find out it is empty (an in-memory URL
    counts as existing: opening it gives the error that says it keeps nothing)."""
    if not url.startswith("sqlite"):
        return True
    from sqlalchemy.engine import make_url

    database = make_url(url).database
    return not database or database == ":memory:" or Path(database).exists()
