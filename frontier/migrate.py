"""Apply or roll back the Alembic revisions in `migrations/` against a DSN, and make a
database ready for a command (`make_ready`)."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

import migrations
from frontier.dsn import describe_dsn, redact
from frontier.errors import DatabaseUnavailable, FrontierError

SCRIPT_LOCATION = Path(migrations.__file__).parent


def sqlalchemy_url(dsn: str) -> str:
    """The SQLAlchemy URL (psycopg driver) for a libpq-style DSN."""
    scheme, sep, rest = dsn.partition("://")
    if not sep or scheme not in ("postgres", "postgresql"):
        raise DatabaseUnavailable(f"not a PostgreSQL DSN: {describe_dsn(dsn)}")
    return f"postgresql+psycopg://{rest}"


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    return config


def _unavailable(dsn: str, exc: sqlalchemy.exc.OperationalError) -> DatabaseUnavailable:
    cause = redact((str(exc.orig) if exc.orig else str(exc)).strip().splitlines()[0], dsn)
    return DatabaseUnavailable(f"cannot connect to PostgreSQL at {describe_dsn(dsn)}: {cause}")


class MigrationFailed(FrontierError):
    """A revision's SQL was refused by the server; the message is the server's first line."""


def _refused(dsn: str, action: str, exc: sqlalchemy.exc.DBAPIError) -> MigrationFailed:
    cause = redact((str(exc.orig) if exc.orig else str(exc)).strip().splitlines()[0], dsn)
    return MigrationFailed(f"{action} of {describe_dsn(dsn)} failed and was rolled back: {cause}")


def _run(dsn: str, action: str, revision: str) -> None:
    config = _config()
    engine = sqlalchemy.create_engine(sqlalchemy_url(dsn), poolclass=sqlalchemy.pool.NullPool)
    try:
        with engine.connect() as connection:
            config.attributes["connection"] = connection
            getattr(command, action)(config, revision)
    except sqlalchemy.exc.OperationalError as exc:
        raise _unavailable(dsn, exc) from None
    except sqlalchemy.exc.DBAPIError as exc:  # e.g. 0006 naming the roles to create first
        raise _refused(dsn, action, exc) from None
    finally:
        engine.dispose()


class SchemaOutdated(FrontierError):
    """The database's schema is not at the revision this code expects."""


def check_current(dsn: str) -> None:
    """Raise `SchemaOutdated` unless the schema is at the newest revision."""
    head = ScriptDirectory.from_config(_config()).get_current_head()
    engine = sqlalchemy.create_engine(sqlalchemy_url(dsn), poolclass=sqlalchemy.pool.NullPool)
    try:
        with engine.connect() as connection:
            current = MigrationContext.configure(connection).get_current_revision()
    except sqlalchemy.exc.OperationalError as exc:
        raise _unavailable(dsn, exc) from None
    finally:
        engine.dispose()
    if current != head:
        raise SchemaOutdated(
            f"the database schema at {describe_dsn(dsn)} is at revision {current or 'none'}, "
            f"this code needs {head}: run `frontier db upgrade`"
        )


def upgrade(dsn: str, revision: str = "head") -> None:
    """Bring the schema up to `revision`; a no-op when it is already there."""
    _run(dsn, "upgrade", revision)


def downgrade(dsn: str, revision: str = "base") -> None:
    _run(dsn, "downgrade", revision)


def make_ready(dsn: str, *, embedded: bool) -> None:
    """Before a command uses the database: the embedded one is ours, so it is migrated;
    a configured one is the operator's and must already be current (`SchemaOutdated`
    otherwise: `frontier db upgrade` migrates it)."""
    if embedded:
        upgrade(dsn)
    else:
        check_current(dsn)
