"""devtools/citus.py's databases for the tests and the benchmarks: a copy is made, and a
database dropped, even while a session holds the database in the way (on Citus, its
maintenance daemon, which DROP ... WITH (FORCE) does not end)."""

from __future__ import annotations

import psycopg
import pytest

from devtools import citus
from tests.conftest import PostgresServer


def test_a_copy_is_made_while_a_session_holds_its_template(pg_server: PostgresServer) -> None:
    admins = [pg_server.admin_dsn, *pg_server.workers]
    citus.create(admins, "frontier_held_template")
    held = psycopg.connect(pg_server.dsn("frontier_held_template"), autocommit=True)
    try:
        citus.create(admins, "frontier_held_copy", template="frontier_held_template")
        with psycopg.connect(pg_server.dsn("frontier_held_copy")) as conn:
            assert conn.execute("SELECT current_database()").fetchone() == ("frontier_held_copy",)
        with pytest.raises(psycopg.OperationalError):  # the session in the way was ended
            held.execute("SELECT 1")
    finally:
        held.close()
        citus.drop(admins, "frontier_held_copy")
        citus.drop(admins, "frontier_held_template")
    with psycopg.connect(pg_server.admin_dsn) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_database WHERE datname LIKE 'frontier_held_%'"
        ).fetchone()
    assert left == (0,)
