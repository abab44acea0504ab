"""The two loops of a fetch process that wake on events rather than on a timer, and the
wait they share (`first_of`):

- `claim_until_stopped`: claim batches while concurrency slots are free, each processed
  in a task of its own; sleep until a batch ends, a submit is notified, the next host is
  due (at most `idle_poll_s`) or `stop`; pause while the sink is down; on stop, give
  in-flight batches `shutdown_s` to finish, then cancel them and release their claims.
- `listen`: LISTEN on `frontier_submitted` and wake the claim loop on each notification.

The timer loops (lease renewal, maintenance) are `frontier.loops.run_every` around
`Fetcher.renew_once` / `Fetcher.maintain_once`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from frontier.clock import utcnow
from frontier.db import Database
from frontier.errors import DatabaseUnavailable
from frontier.queue import Claim
from frontier.reconnect import is_connection_loss

if TYPE_CHECKING:
    from fetcher.worker import Fetcher

log = logging.getLogger(__name__)

NOTIFY_CHANNEL = "frontier_submitted"


async def claim_until_stopped(
    fetcher: Fetcher, *, wake: asyncio.Event, stop: asyncio.Event, until_idle: bool
) -> None:
    """Claim and process batches until `stop` (or, with `until_idle`, until nothing is due
    and nothing is in flight)."""
    config = fetcher.config
    tasks: set[asyncio.Task[None]] = set()
    backoff = fetcher.db.outage.backoff()
    try:
        while not stop.is_set():
            paused_s = fetcher.sink_backoff.paused_for(time.monotonic())
            if paused_s > 0:
                await first_of([*tasks], [stop], paused_s)
                continue
            free = config.concurrency - len(fetcher.in_flight)
            claimed = 0
            if free > 0:
                try:
                    claims = await fetcher.claim(min(free, config.claim_batch))
                except DatabaseUnavailable as exc:  # wait, then claim again
                    delay = backoff.next_delay()
                    fetcher.db.outage.report(exc, delay)
                    await first_of([], [stop], delay)
                    continue
                except Exception as exc:  # a failing statement: wait a tick, try again
                    log.error("claim failed: %s", exc)
                    claims = []
                else:
                    backoff.reset()
                claimed = len(claims)
                if claims:
                    task = asyncio.create_task(_guarded(fetcher, claims))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                    continue
            if until_idle and not tasks and not claimed and await _idle(fetcher):
                break
            timeout = await _idle_wait(fetcher) if not claimed else config.idle_poll_s
            wake.clear()
            await first_of([*tasks], [wake, stop], timeout)
    finally:
        await _shutdown(fetcher, tasks)


async def _guarded(fetcher: Fetcher, claims: Sequence[Claim]) -> None:
    try:
        await fetcher.process(claims)
    except asyncio.CancelledError:
        raise
    except DatabaseUnavailable as exc:  # no traceback: the outage is logged once
        log.warning("a batch of %d claims could not finish (%s)", len(claims), exc)
    except Exception:
        log.exception("a batch of %d claims failed; released", len(claims))


async def _idle(fetcher: Fetcher) -> bool:
    try:
        return not await fetcher.hosts.due_now() and await fetcher.queue.in_flight() == 0
    except DatabaseUnavailable:
        return False  # the claim loop reports the outage and backs off
    except Exception as exc:
        log.error("idle check failed: %s", exc)
        return False


async def _idle_wait(fetcher: Fetcher) -> float:
    """Sleep until the next host becomes ready, at most the poll interval."""
    poll_s = fetcher.config.idle_poll_s
    try:
        due = await fetcher.queue.next_due()
    except Exception:
        return poll_s
    if due is None:
        return poll_s
    return min(max((due - utcnow()).total_seconds(), 0.01), poll_s)


async def _shutdown(fetcher: Fetcher, tasks: set[asyncio.Task[None]]) -> None:
    if tasks:
        _done, pending = await asyncio.wait(set(tasks), timeout=fetcher.config.shutdown_s)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    left = list(fetcher.in_flight.values())
    if left:
        fetcher.summary.released += await fetcher.release(left)


async def listen(db: Database, wake: asyncio.Event, stop: asyncio.Event) -> None:
    """LISTEN on frontier_submitted on a connection of its own until `stop`; when the
    server drops it, LISTEN again (with backoff) and wake the claim loop, since
    notifications sent meanwhile are lost. Without it, the claim loop still polls."""
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
                    await conn.add_listener(NOTIFY_CHANNEL, notified)
                    if backoff.attempts:
                        log.info("LISTEN %s again", NOTIFY_CHANNEL)
                        wake.set()
                    backoff.reset()
                    await first_of([], [lost, stop], None)
                finally:  # a dead connection is already back in the pool: let go
                    with contextlib.suppress(Exception):
                        conn.remove_termination_listener(terminated)
                        if not conn.is_closed():
                            await conn.remove_listener(NOTIFY_CHANNEL, notified)
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
                    NOTIFY_CHANNEL,
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
