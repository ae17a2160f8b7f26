"""The `orch` group: global options (--store, --version) that every command reads, and the one
place where a command's errors become a line on stderr and an exit code."""

import sys
from collections.abc import Sequence
from typing import Any

import click

from orchestrator import __version__
from orchestrator.errors import InputError, OrchError
from orchestrator.interrupts import sigterm_interrupts

__all__ = ["EXIT_FAILURE", "EXIT_INPUT", "EXIT_INTERRUPTED", "OrchGroup", "cli"]

EXIT_INPUT, EXIT_FAILURE, EXIT_INTERRUPTED = 2, 1, 130


class OrchGroup(click.Group):
    """A group whose `main` turns our errors into one line and an exit code, never a traceback,
    whoever calls it: the console script, `python -m orchestrator` or click's `CliRunner`."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            with sigterm_interrupts():  # `kill PID` is Ctrl-C in every command: exit 130, cleaned up
                code = super().main(args, prog_name or "orch", complete_var, standalone_mode=False, **extra)
        except (click.ClickException, click.exceptions.Abort, KeyboardInterrupt, OrchError) as error:
            code = _said(error)
        if not standalone_mode:
            return code
        sys.exit(code or 0)


def _said(error: BaseException) -> int:
    """The one line an error gets on stderr, and the exit code it ends in."""
    if isinstance(error, click.UsageError):  # one line, like every other bad input, with where to look
        where = error.ctx.command_path if error.ctx else "orch"
        click.echo(f"orch: error: {error.format_message()} (see '{where} --help')", err=True)
        return EXIT_INPUT
    if isinstance(error, click.ClickException):
        error.show()
        return error.exit_code
    if isinstance(error, click.exceptions.Abort | KeyboardInterrupt):
        click.echo("orch: interrupted", err=True)
        return EXIT_INTERRUPTED
    click.echo(f"orch: error: {error}", err=True)
    # bad input (a store URL, a sweep file, a fit option, a data file) or a failure (the store,
    # a checkpoint, a cluster)
    return EXIT_INPUT if isinstance(error, InputError) else EXIT_FAILURE


@click.group(name="orch", cls=OrchGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
