"""`frontier db`: the schema commands.

`current` exits 0 when the database is at the code's head, 1 when it is behind (`frontier db
upgrade` brings it up), and, like every command that checks the schema, 2 when it is at a
revision this code does not know (a newer frontier's).
"""

from __future__ import annotations

import typer

from frontier import migrate
from frontier.connect import database_dsn
from frontier_cli.app import EXIT_PARTIAL, app, settings_of

db_app = typer.Typer(help="Database schema commands.", no_args_is_help=True)
app.add_typer(db_app, name="db")


@db_app.command("upgrade")
def db_upgrade(ctx: typer.Context) -> None:
    """Apply the schema migrations (idempotent)."""
    with database_dsn(settings_of(ctx)) as dsn:
        migrate.upgrade(dsn)
    typer.echo("database schema is up to date")


@db_app.command("current")
def db_current(ctx: typer.Context) -> None:
    """The database's schema revision and whether it is this code's head (exit 0), behind
    it (exit 1) or newer than this frontier (exit 2)."""
    with database_dsn(settings_of(ctx)) as dsn:
        found = migrate.status(dsn)
        migrate.refuse_newer(dsn, found.current)  # the one message every command gives
    if found.at_head:
        typer.echo(f"{found.current} (head): the schema is current")
        return
    typer.echo(f"{found.current or 'none'}: behind head {found.head}: run `frontier db upgrade`")
    raise typer.Exit(EXIT_PARTIAL)


@db_app.command("history")
def db_history(ctx: typer.Context) -> None:
    """This code's schema revisions, oldest first; the database's is marked `(current)`."""
    with database_dsn(settings_of(ctx)) as dsn:
        found = migrate.status(dsn)
    revisions = migrate.history(found.current)
    for revision in revisions:
        marks = [
            m
            for m, on in (("head", revision.revision == found.head), ("current", revision.current))
            if on
        ]
        suffix = f" ({', '.join(marks)})" if marks else ""
        typer.echo(f"{revision.revision}{suffix}  {revision.title}")
    if found.current is None:
        typer.echo("(the database has no schema yet: `frontier db upgrade`)")
    elif found.newer:
        typer.echo(
            f"{found.current} (current)  unknown to this frontier: newer than head "
            f"{found.head}; upgrade frontier"
        )
