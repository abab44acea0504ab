"""LISTEN on a channel: wake a loop on each notification, on a connection of its own that is
opened again when the server drops it; and `first_of`, the wait such a loop and LISTEN
share (a task ends, an event is set, or time runs out).

The fetcher's claim loop (`Fetcher._claim_until_stopped`, `fetcher.worker`) listens on
`frontier_submitted`; the poller's WebSub loop (`poller.websub`) on `frontier_websub`. The
timer loops (lease renewal, maintenance) are `frontier.loops.run_every`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from frontier.db import Database
from frontier.errors import DatabaseUnavailable
from frontier.reconnect import is_connection_loss

log = logging.getLogger(__name__)

SUBMITTED = "frontier_submitted"  # new URLs in the frontier (queue.sql, hosts.sql)


async def listen(
    db: Database, wake: asyncio.Event, stop: asyncio.Event, channel: str = SUBMITTED
) -> None:
    """LISTEN on `channel` on a connection of its own until `stop`; when the server drops
    it, LISTEN again (with backoff) and wake the loop, since notifications sent meanwhile
    are lost. Without it, the loop still looks on its timer."""
    backoff = db.outage.backoff()

    def notified(*_args: object) -> None:
        wake.set()

    while not stop.is_set():
        lost = asyncio.Event()

        def terminated(*_args: object) -> None:
            lost.set()  # noqa: B023 - each connection gets its own callback and event

        try:
            async with db.connection() as conn:
                conn.add_termination_listener(terminated)
                try:
                    await conn.add_listener(channel, notified)
                    if backoff.attempts:
                        log.info("LISTEN %s again", channel)
                        wake.set()
                    backoff.reset()
                    await first_of([], [lost, stop], None)
                finally:  # a dead connection is already back in the pool: let go
                    with contextlib.suppress(Exception):
                        conn.remove_termination_listener(terminated)
                        if not conn.is_closed():
                            await conn.remove_listener(channel, notified)
            if stop.is_set():
                return
            raise DatabaseUnavailable("the LISTEN connection was closed by the server")
        except Exception as exc:
            delay = backoff.next_delay()
            if is_connection_loss(exc):
                db.outage.report(exc, delay)
            else:
                log.warning(
                    "LISTEN %s failed (%s); polling meanwhile, again in %.1f s",
                    channel,
                    exc,
                    delay,
                )
            await first_of([], [stop], delay)


async def first_of(
    tasks: list[asyncio.Task[None]], events: list[asyncio.Event], timeout: float | None
) -> None:
    """Wait until a task ends, an event is set, or `timeout` passes."""
    waiters = [asyncio.create_task(e.wait()) for e in events]
    try:
        await asyncio.wait([*tasks, *waiters], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
