"""Pooled connections go back to the pool without asyncpg's reset query (one round trip
per statement saved), but session-level work, through `Database.connection()` only, is
reset before its connection is reused."""

from __future__ import annotations

from frontier.db import Database


async def test_session_state_from_connection_does_not_leak(fresh_dsn: str) -> None:
    db = await Database.connect(fresh_dsn, min_size=1, max_size=1)  # one connection, reused
    try:
        default = await db.fetchval("SHOW application_name")
        async with db.connection() as conn:
            await conn.execute("SET application_name = 'leaked'")
            await conn.execute("LISTEN some_channel")
            await conn.execute("SELECT pg_advisory_lock(42)")
        assert await db.fetchval("SHOW application_name") == default
        assert await db.fetch("SELECT pg_listening_channels()") == []
        locks = (
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
        )
        assert await db.fetchval(locks) == 0
        # The frontier's own session setting comes back with the reset (frontier/db.py).
        visibility = "SELECT current_setting('citus.override_table_visibility', true)"
        assert await db.fetchval(visibility) == "off"
    finally:
        await db.close()
