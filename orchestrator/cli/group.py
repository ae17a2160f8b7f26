"""The `orch` group: global options (--store, --version) that every command reads."""

import click

from orchestrator import __version__

__all__ = ["cli"]


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
