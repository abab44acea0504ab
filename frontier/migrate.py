"""Apply or roll back the Alembic revisions in `migrations/` against a DSN, say where a
database stands (`status`, `history`), and make a database ready for a command
(`make_ready`).

A database is at the code's head (current), at an older revision the code knows (behind:
`frontier db upgrade` brings it up), or at a revision the code does not know: written by a
newer frontier, which no command here can use or migrate (`SchemaOutdated` says "upgrade
frontier").

Every command checks the schema as it starts (`make_ready`). A database at the code's head,
nearly always the case, is answered by one query against `migrations.HEAD`, through
asyncpg (which the commands use anyway); Alembic, SQLAlchemy and psycopg are imported, and
the revisions read, only for anything else. Loading them cost every command a noticeable
part of its start-up (`python -X importtime`; bench.submit's `cli_overhead_s`; psycopg
alone 38 ms of a fetch process's: bench/RESULTS.md, ninth session).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import asyncpg

import migrations
from frontier.db import REFUSED, UNREACHABLE
from frontier.dsn import describe_dsn, redact
from frontier.errors import DatabaseUnavailable, FrontierError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

SCRIPT_LOCATION = Path(migrations.__file__).parent


def sqlalchemy_url(dsn: str) -> str:
    """The SQLAlchemy URL (psycopg driver) for a libpq-style DSN."""
    scheme, sep, rest = dsn.partition("://")
    if not sep or scheme not in ("postgres", "postgresql"):
        raise DatabaseUnavailable(
            f"not a PostgreSQL DSN: {describe_dsn(dsn)} (check FRONTIER_DATABASE_URL)"
        )
    return f"postgresql+psycopg://{rest}"


def _config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    return config


def _unavailable(dsn: str, exc: Exception) -> DatabaseUnavailable:
    """`exc`: the driver's error, or SQLAlchemy's wrapping it."""
    cause = redact(_first_line(getattr(exc, "orig", None) or exc), dsn)
    return DatabaseUnavailable(f"cannot connect to PostgreSQL at {describe_dsn(dsn)}: {cause}")


class MigrationFailed(FrontierError):
    """A revision's SQL was refused by the server; the message is the server's first line."""


def _refused(dsn: str, action: str, exc: Exception) -> MigrationFailed:
    cause = redact(_first_line(getattr(exc, "orig", None) or exc), dsn)
    return MigrationFailed(f"{action} of {describe_dsn(dsn)} failed and was rolled back: {cause}")


def _first_line(error: BaseException) -> str:
    """The error's first line, or its type's name when it says nothing (a driver's
    `OSError()` from a dropped connection has no message)."""
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def _run(dsn: str, action: str, revision: str) -> None:
    import sqlalchemy
    from alembic import command
    from alembic.runtime.migration import MigrationContext

    config = _config()
    engine = sqlalchemy.create_engine(sqlalchemy_url(dsn), poolclass=sqlalchemy.pool.NullPool)
    try:
        with engine.connect() as connection:
            current = MigrationContext.configure(connection).get_current_revision()
            connection.rollback()
            refuse_newer(dsn, current)  # Alembic would fail on a revision it cannot locate
            config.attributes["connection"] = connection
            getattr(command, action)(config, revision)
    except sqlalchemy.exc.OperationalError as exc:
        raise _unavailable(dsn, exc) from None
    except sqlalchemy.exc.DBAPIError as exc:  # e.g. 0006 naming the roles to create first
        raise _refused(dsn, action, exc) from None
    finally:
        engine.dispose()


class SchemaOutdated(FrontierError):
    """The database's schema is not at the revision this code expects: behind it, or at a
    revision this code does not know (a newer frontier's)."""


@dataclass(frozen=True, slots=True)
class Revision:
    """One of the code's revisions, oldest first in `history`."""

    revision: str
    down_revision: str | None
    title: str  # its docstring up to the first colon or full stop
    current: bool  # the database is at this revision


@dataclass(frozen=True, slots=True)
class SchemaStatus:
    """Where a database's schema stands against this code."""

    current: str | None  # the database's revision; None: never migrated
    head: str  # the code's newest revision
    known: bool  # the code has `current` (or it is None)

    @property
    def at_head(self) -> bool:
        return self.current == self.head

    @property
    def newer(self) -> bool:
        """The database is at a revision this code does not know: a newer frontier's."""
        return not self.known


def _script() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config())


def head() -> str:
    """The code's newest revision."""
    newest = _script().get_current_head()
    assert newest is not None, "migrations/ holds no revision"
    return newest


def _known(revision: str | None) -> bool:
    return revision is None or any(r.revision == revision for r in _script().walk_revisions())


def _newer_message(dsn: str, current: str) -> str:
    return (
        f"the database schema at {describe_dsn(dsn)} (revision {current}) is newer than "
        f"this frontier (head {head()}): upgrade frontier"
    )


def refuse_newer(dsn: str, current: str | None) -> None:
    """Raise `SchemaOutdated` ("upgrade frontier") when `current` is unknown to this code."""
    if not _known(current):
        raise SchemaOutdated(_newer_message(dsn, str(current)))


def current_revision(dsn: str) -> str | None:
    """The database's revision (alembic_version), None when it was never migrated."""
    import sqlalchemy
    from alembic.runtime.migration import MigrationContext

    engine = sqlalchemy.create_engine(sqlalchemy_url(dsn), poolclass=sqlalchemy.pool.NullPool)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    except sqlalchemy.exc.OperationalError as exc:
        raise _unavailable(dsn, exc) from None
    finally:
        engine.dispose()


def status(dsn: str) -> SchemaStatus:
    current = current_revision(dsn)
    return SchemaStatus(current=current, head=head(), known=_known(current))


def history(current: str | None = None) -> list[Revision]:
    """The code's revisions, oldest first, marking `current` (a database's revision)."""
    revisions = []
    for script in reversed(list(_script().walk_revisions())):
        down = script.down_revision
        assert down is None or isinstance(down, str), "the revisions form one line"
        title = re.split(r"[:.](?:\s|$)", " ".join((script.doc or "").split()))[0]
        revisions.append(Revision(script.revision, down, title, script.revision == current))
    return revisions


def check_current(dsn: str) -> None:
    """Raise `SchemaOutdated` unless the schema is at the newest revision."""
    if _at_head(dsn):
        return
    found = status(dsn)
    refuse_newer(dsn, found.current)
    if not found.at_head:
        raise SchemaOutdated(
            f"the database schema at {describe_dsn(dsn)} is at revision "
            f"{found.current or 'none'}, this code needs {found.head}: run `frontier db upgrade`"
        )


def _at_head(dsn: str) -> bool:
    """The database is at `migrations.HEAD` (one query, no Alembic). False when it is not,
    or has no alembic_version table: the full check then says where it stands."""
    sqlalchemy_url(dsn)  # not a PostgreSQL DSN: refused as the full check refuses it
    return _apart(_versions(dsn)) == [migrations.HEAD]


async def _versions(dsn: str) -> list[str] | None:
    """alembic_version's rows; None when it cannot be read (never migrated, or not
    readable: the full check says which). A server that cannot be reached is refused as
    `frontier.db.Database.connect` refuses it."""
    try:
        connection = await asyncpg.connect(dsn, timeout=10.0)
    except UNREACHABLE + REFUSED as exc:  # as frontier.db.Database.connect refuses it
        raise _unavailable(dsn, exc) from None
    try:
        rows = await connection.fetch("SELECT version_num FROM alembic_version")
    except asyncpg.PostgresError:
        return None
    finally:
        await connection.close()
    return [row[0] for row in rows]


T = TypeVar("T")


def _apart(work: Coroutine[Any, Any, T]) -> T:
    """`work` run to its end on an event loop of its own: this one's, or, called from code
    already on a loop (a test, a service checking again), a thread's."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, work).result()


def upgrade(dsn: str, revision: str = "head") -> None:
    """Bring the schema up to `revision`; a no-op when it is already there."""
    _run(dsn, "upgrade", revision)


def downgrade(dsn: str, revision: str = "base") -> None:
    _run(dsn, "downgrade", revision)


def make_ready(dsn: str, *, embedded: bool) -> None:
    """Before a command uses the database: the embedded one is ours, so it is migrated;
    a configured one is the operator's and must already be current (`SchemaOutdated`
    otherwise: `frontier db upgrade` migrates it). A configured one that cannot be reached
    is named by its setting."""
    if embedded:
        if not _at_head(dsn):
            upgrade(dsn)
        return
    try:
        check_current(dsn)
    except DatabaseUnavailable as exc:
        if "FRONTIER_DATABASE_URL" in str(exc):
            raise
        raise DatabaseUnavailable(f"{exc}; check FRONTIER_DATABASE_URL") from None
