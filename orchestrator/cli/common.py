"""What every command shares: the store URL it resolves, JSON output, the size option type."""

import json
import math
from pathlib import Path
from typing import Any

import click

from orchestrator.spec import DEFAULT_STORE
from orchestrator.spec.sizes import SizeError, parse_size

__all__ = ["SizeParam", "emit_json", "store_exists", "store_url"]


def store_url(ctx: click.Context, spec_store: str | None = None) -> str:
    """--store, then ORCH_STORE (click reads both into the option), then the sweep file's store."""
    return ctx.obj["store"] or spec_store or DEFAULT_STORE


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


class SizeParam(click.ParamType):
    name = "size"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        try:
            return parse_size(value)
        except SizeError as error:
            self.fail(str(error), param, ctx)


def store_exists(url: str) -> bool:
    """A dry run must not create a SQLite file just to find out it is empty."""
    if not url.startswith("sqlite"):
        return True
    from sqlalchemy.engine import make_url

    database = make_url(url).database
    return bool(database) and (database == ":memory:" or Path(database).exists())
