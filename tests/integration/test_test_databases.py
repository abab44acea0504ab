"""devtools/citus.py's databases for the tests and the benchmarks: a copy is made, and a
database dropped, even while a session holds the database in the way (on Citus, its
maintenance daemon, which DROP ... WITH (FORCE) does not end); and templates are made one
at a time."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from devtools import citus
from tests.conditions import wait_until
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


def _waiting_for_the_template_lock(admin_dsn: str) -> bool:
    with psycopg.connect(admin_dsn) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND (classid::bigint << 32) + objid::bigint = %s",
            [citus.TEMPLATE_LOCK],
        ).fetchone()
    return row == (1,)


async def test_a_template_is_made_after_the_one_being_made(pg_server: PostgresServer) -> None:
    """A second process's template lock waits for the first's to be released (two made at
    once on a Citus cluster failed in citus_add_node now and then)."""
    order: list[str] = []

    def second() -> None:
        with citus.one_template_at_a_time(pg_server.admin_dsn):
            order.append("second")

    with citus.one_template_at_a_time(pg_server.admin_dsn):
        waiting = asyncio.create_task(asyncio.to_thread(second))
        await wait_until(
            lambda: _waiting_for_the_template_lock(pg_server.admin_dsn),
            what="the second lock waiting",
        )
        order.append("first")
    await asyncio.wait_for(waiting, 60)
    assert order == ["first", "second"]
