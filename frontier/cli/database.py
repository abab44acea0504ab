"""`frontier db`: the schema commands."""

from __future__ import annotations

import typer

from frontier import migrate
from frontier.cli.app import app, settings_of
from frontier.connect import database_dsn

db_app = typer.Typer(help="Database schema commands.", no_args_is_help=True)
app.add_typer(db_app, name="db")


@db_app.command("upgrade")
def db_upgrade(ctx: typer.Context) -> None:
    """Apply the schema migrations (idempotent)."""
    with database_dsn(settings_of(ctx)) as dsn:
        migrate.upgrade(dsn)
    typer.echo("database schema is up to date")
