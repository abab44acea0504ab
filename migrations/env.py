"""Alembic environment: runs revisions on the connection `frontier.migrate` hands over, or
on the URL in the Alembic config. A session advisory lock makes concurrent upgrades safe."""

from alembic import context
from sqlalchemy import create_engine, text

MIGRATION_LOCK = 7_310_001  # pg_advisory_lock key shared by every `frontier db upgrade`


def run_migrations() -> None:
    connection = context.config.attributes.get("connection")
    if connection is None:
        engine = create_engine(context.config.get_main_option("sqlalchemy.url"))
        with engine.connect() as connection:
            _run(connection)
        engine.dispose()
    else:
        _run(connection)


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
    connection.commit()
    try:
        context.configure(connection=connection, transaction_per_migration=True)
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()
    finally:
        connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
        connection.commit()


run_migrations()
