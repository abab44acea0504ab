"""The `frontier` command. Settings are read here, once, and passed down.

Exit codes: 0 success, 1 partial failure (a summary says what failed), 2 bad usage, bad
input or an unusable database.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import typer

from frontier.database import database_dsn, open_database
from frontier.db import Database
from frontier.errors import FrontierError
from frontier.settings import Settings

T = TypeVar("T")

EXIT_PARTIAL = 1
EXIT_USAGE = 2

app = typer.Typer(
    help="frontier: a PostgreSQL-backed URL frontier for news and blog ingestion.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
db_app = typer.Typer(help="Database schema commands.", no_args_is_help=True)
app.add_typer(db_app, name="db")


def settings_of(ctx: typer.Context) -> Settings:
    settings: Settings = ctx.find_root().obj
    return settings


def run_with_database(settings: Settings, work: Callable[[Database], Awaitable[T]]) -> T:
    """Open the database (embedded if no DSN), run `work`, close everything.

    The embedded database is ours, so it is migrated on the way; a configured one must
    already be at the current schema (`frontier db upgrade`)."""
    from frontier import migrate

    with database_dsn(settings) as dsn:
        if settings.database_url:
            migrate.check_current(dsn)
        else:
            migrate.upgrade(dsn)

        async def main() -> T:
            async with open_database(dsn, settings) as db:
                return await work(db)

        return asyncio.run(main())


@app.callback()
def root(
    ctx: typer.Context,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log at debug level."),
) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    ctx.obj = Settings.load()


@db_app.command("upgrade")
def db_upgrade(ctx: typer.Context) -> None:
    """Apply the schema migrations (idempotent)."""
    from frontier import migrate

    with database_dsn(settings_of(ctx)) as dsn:
        migrate.upgrade(dsn)
    typer.echo("database schema is up to date")


@app.command()
def status(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the stable JSON shape."),
) -> None:
    """Counts by status, origin, source and host; due work; recent claims."""
    from frontier.stats import StatsRepository

    stats = run_with_database(settings_of(ctx), lambda db: StatsRepository(db).stats())
    if as_json:
        typer.echo(json.dumps(stats, indent=2))
        return
    typer.echo(render_status(stats))


def render_status(stats: dict[str, Any]) -> str:
    lines = [f"URLs in the frontier: {stats['total']}  (due now: {stats['due_now']})"]
    for title, key in (
        ("by status", "by_status"),
        ("by origin", "by_origin"),
        ("by source", "by_source"),
    ):
        counts = stats[key]
        lines.append(f"{title}:" + ("" if counts else " none"))
        lines.extend(f"  {name:<24} {n:>12}" for name, n in counts.items())
    hosts = stats["hosts"]
    lines.append(f"hosts: {hosts['known']} known, {hosts['ready_now']} ready now")
    lines.extend(f"  {h['host']:<40} {h['pending']:>10} pending" for h in hosts["top_pending"])
    lines.append(f"claims in the last minute: {stats['claims_last_minute']}")
    if stats["oldest_due_at"]:
        lines.append(f"oldest due URL waiting since: {stats['oldest_due_at']}")
    return "\n".join(lines)


def main() -> None:
    """Console entry point: turns frontier's own errors into one line and exit code 2."""
    try:
        app()
    except FrontierError as exc:
        typer.echo(f"frontier: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        sys.exit(130)
