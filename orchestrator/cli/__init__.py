"""The `orch` command line: stdout is data, stderr is progress; bad input exits 2, failures 1.

The entry point lives here, the group in `group`, the commands in `sweeps` (sweep, status),
`results` (fit, report), `check`, `planning` (next), `features` and `data` (align, baselines,
export, db).
"""

import sys

import click

from orchestrator.cli import check, data, features, planning, results, sweeps  # noqa: F401  (their commands join `cli`)
from orchestrator.cli.group import cli
from orchestrator.errors import InputError, OrchError

__all__ = ["cli", "main"]

EXIT_INPUT, EXIT_FAILURE, EXIT_INTERRUPTED = 2, 1, 130


def main() -> None:
    """Entry point: turn our errors into one line on stderr and an exit code, never a traceback."""
    try:
        code = cli.main(standalone_mode=False)
    except click.UsageError as error:  # one line, like every other bad input, with where to look
        where = error.ctx.command_path if error.ctx else "orch"
        click.echo(f"orch: error: {error.format_message()} (see '{where} --help')", err=True)
        code = EXIT_INPUT
    except click.ClickException as error:
        error.show()
        code = error.exit_code
    except click.exceptions.Abort:
        click.echo("orch: interrupted", err=True)
        code = EXIT_INTERRUPTED
    except KeyboardInterrupt:
        click.echo("orch: interrupted", err=True)
        code = EXIT_INTERRUPTED
    except InputError as error:  # a store URL, a sweep file, a fit option, a data file
        click.echo(f"orch: error: {error}", err=True)
        code = EXIT_INPUT
    except OrchError as error:  # the store, a checkpoint, a cluster that failed
        click.echo(f"orch: error: {error}", err=True)
        code = EXIT_FAILURE
    sys.exit(code or 0)
