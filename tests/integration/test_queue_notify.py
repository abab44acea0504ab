"""Submitting new URLs wakes fetchers that LISTEN on `frontier_submitted` (when the fold of
the batch's host summaries commits: its URLs are then claimable)."""

import asyncio

from frontier.db import Database
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, SourceRef
from frontier.states import Origin


async def test_submit_notifies_listeners_only_for_new_work(db: Database) -> None:
    payloads: asyncio.Queue[str] = asyncio.Queue()
    source = SourceRef(await db.fetchval("SELECT id FROM sources WHERE name = 'manual'"))
    batch = [Candidate("http://a.example/", source, Origin.MANUAL)]

    def heard(_conn: object, _pid: int, _channel: str, payload: str) -> None:
        payloads.put_nowait(payload)

    async with db.connection() as listener:
        await listener.add_listener("frontier_submitted", heard)
        await QueueRepository(db).submit(batch)
        assert await asyncio.wait_for(payloads.get(), timeout=10) == ""
        assert (await QueueRepository(db).submit(batch)).known == 1
        # Notifications arrive in commit order: once the sentinel is heard, a notification
        # from the known-only batch would have been heard before it.
        await db.execute("SELECT pg_notify('frontier_submitted', 'sentinel')")
        assert await asyncio.wait_for(payloads.get(), timeout=10) == "sentinel"
        await listener.remove_listener("frontier_submitted", heard)
