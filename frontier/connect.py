"""Open the platform's database from settings: the configured DSN, or the embedded
PostgreSQL under FRONTIER_HOME when none is set."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager

from frontier.db import Database
from frontier.embedded import EmbeddedPostgres
from frontier.errors import DatabaseUnavailable
from frontier.settings import Settings


@contextmanager
def database_dsn(settings: Settings, *, say: Callable[[str], None] | None = None) -> Iterator[str]:
    """The DSN to use; starts (and afterwards stops) the embedded server if needed. `say`
    (optional) hears what happened to the embedded server: joined one already running,
    stopped it. A server another process still uses is left running, and nothing is said."""
    if settings.database_url:
        yield settings.database_url
        return
    embedded = EmbeddedPostgres(settings.home)
    try:
        dsn = embedded.start()
        if say is not None and embedded.joined:
            say("database: the embedded PostgreSQL was already running (another process uses it)")
        yield dsn
    finally:
        if embedded.stop() and say is not None:
            say("database: embedded PostgreSQL stopped")


def database_setting(settings: Settings) -> str:
    """Which setting chose the database, for an error that says where it tried."""
    if settings.database_url:
        return "check FRONTIER_DATABASE_URL"
    return f"the embedded PostgreSQL under FRONTIER_HOME ({settings.home})"


@asynccontextmanager
async def open_database(dsn: str, settings: Settings) -> AsyncIterator[Database]:
    try:
        db = await Database.connect(
            dsn,
            max_size=settings.db_pool_size,
            timeout=settings.db_connect_timeout_s,
            reconnect_max_s=settings.db_reconnect_max_s,
        )
    except DatabaseUnavailable as exc:
        raise DatabaseUnavailable(f"{exc}; {database_setting(settings)}") from None
    try:
        yield db
    finally:
        await asyncio.shield(db.close())
