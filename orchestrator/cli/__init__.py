"""The `orch` command line: stdout is data, stderr is progress; bad input exits 2, failures 1.

The entry point lives here, the group (and how errors become exit codes) in `group`, the
commands in `sweeps` (sweep, status), `results` (fit, report), `check`, `planning` (next),
`features` and `data` (align, baselines, export, db).
"""

from orchestrator.cli import check, data, features, planning, results, sweeps  # noqa: F401  (their commands join `cli`)
from orchestrator.cli.group import cli

__all__ = ["cli", "main"]


def main() -> None:
    """Entry point: `cli` exits with the command's code (its errors as one line on stderr)."""
    cli()
