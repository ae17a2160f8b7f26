"""The `orch` command line: stdout is data, stderr is progress; bad input exits 2, failures 1.

The entry point lives here, the group (and how errors become exit codes) in `group`, the
commands in `sweeps` (sweep, status), `results` (fit, report), `check`, `planning` (next),
`features`, `data` (pairs, chunks), `align`, `baselines`, `exchange` (import, export) and
`store` (db upgrade).
"""

from orchestrator.cli import (  # noqa: F401  (their commands join `cli`)
    align,
    baselines,
    check,
    data,
    exchange,
    features,
    planning,
    results,
    store,
    sweeps,
)
from orchestrator.cli.group import cli

__all__ = ["cli", "main"]


def main() -> None:
    """Entry point: `cli` exits with the command's code (its errors as one line on stderr)."""
    cli()
