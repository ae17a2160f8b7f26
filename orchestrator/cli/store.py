"""`orch db upgrade`: bring a store written by an older orch to this schema, in place."""

import click

from db import SCHEMA_VERSION, mask_url
from orchestrator.cli.common import (
    open_store,
    store_exists,
    store_option,
    store_url,
)
from orchestrator.cli.group import cli
from orchestrator.errors import InputError


@cli.group()
def db() -> None:
    """The store itself."""


@db.command("upgrade")
@store_option
@click.pass_context
def db_upgrade(ctx: click.Context) -> None:
    """Bring a store written by an older orch to this orch's schema, in place, keeping every row.

    \b
        orch --store sqlite:///orch.db db upgrade
    """
    url = store_url(ctx)
    if not store_exists(url):
        raise InputError(f"store {mask_url(url)} does not exist (nothing to upgrade)")
    store = open_store(url, upgrade=True)  # an empty or foreign database: refused
    if store.upgraded_from is None:
        click.echo(f"store {store.url} is already at schema {SCHEMA_VERSION}", err=True)
    else:
        done = f"upgraded from schema {store.upgraded_from} to {SCHEMA_VERSION}"
        click.echo(f"store {store.url} {done}", err=True)
