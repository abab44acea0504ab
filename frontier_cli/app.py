"""The `frontier` command's root: the typer app, the settings (read here, once, and passed
down) and the way every command opens its database.

Exit codes: 0 success, 1 partial failure (a summary says what failed), 2 bad usage, bad
input or an unusable database.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import typer

from frontier import log_setup

if TYPE_CHECKING:  # imported where used: `frontier --help` reads none of them
    from frontier.db import Database
    from frontier.settings import Settings

T = TypeVar("T")

log = logging.getLogger("frontier")

EXIT_PARTIAL = 1
EXIT_USAGE = 2


class Restart(Exception):
    """Raised by a command whose process must start again, with the same command line, in
    `environment`: what is fixed when a process starts (the memory allocator it preloads)
    can only be changed that way. `main`, the process's own entry point, replaces the
    process (same PID); a test that invokes `app` itself sees the exception instead."""

    def __init__(self, environment: dict[str, str]) -> None:
        super().__init__("restart the process in a new environment")
        self.environment = environment


app = typer.Typer(
    help="frontier: a PostgreSQL-backed URL frontier for news and blog ingestion.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def settings_of(ctx: typer.Context) -> Settings:
    settings: Settings = ctx.find_root().obj
    return settings


def warn_if_default_user_agent(settings: Settings) -> bool:
    """Log one warning when a long-running service (`poll`, `fetch`, `serve`, `spider
    --every`) starts with the packaged User-Agent, whose contact URL is not the operator's;
    True if it did."""
    from frontier.settings import Settings

    default = Settings.model_fields["user_agent"].default
    if settings.user_agent != default:
        return False
    log.warning(
        "FRONTIER_USER_AGENT is the default %r: set it to your crawler's name and a contact "
        "URL you own; sites see it on every request and match it in robots.txt",
        default,
    )
    return True


def start_service(settings: Settings, *, warn_user_agent: bool = True) -> None:
    """What a long-running service (`poll`, `fetch`, `serve`, `spider --every`, and `up`
    when not on a terminal) does
    first: log at INFO unless FRONTIER_LOG_LEVEL (or --verbose) says otherwise, so that each
    poll, spider run, fetch batch and failure is a line; then the User-Agent warning."""
    if settings.log_level is None and logging.getLogger().level > logging.INFO:
        logging.getLogger().setLevel(log_setup.level_for(None, service=True))
    if warn_user_agent:
        warn_if_default_user_agent(settings)


def run_with_database(settings: Settings, work: Callable[[Database], Awaitable[T]]) -> T:
    """Open the database (embedded if no DSN), run `work`, close everything.

    The embedded database is ours, so it is migrated on the way; a configured one must
    already be at the current schema (`frontier db upgrade`)."""
    from frontier import event_loop, migrate
    from frontier.connect import database_dsn, open_database

    with database_dsn(settings) as dsn:
        migrate.make_ready(dsn, embedded=not settings.database_url)

        async def main() -> T:
            async with open_database(dsn, settings) as db:
                return await work(db)

        return event_loop.run(main())


@app.callback()
def root(
    ctx: typer.Context,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log at debug level."),
) -> None:
    from frontier.settings import Settings

    settings = Settings.load()
    log_setup.configure(
        log_setup.level_for(settings.log_level, service=False, verbose=verbose),
        settings.log_format,
    )
    ctx.obj = settings
