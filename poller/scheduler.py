"""The due-source scheduler. `Poller.run_once()` claims due sources (SKIP LOCKED, with a
poll lease, at most `per_host` per host across all processes), polls them with bounded
concurrency, and writes their new state and fetch-log rows in batches; `run_forever()`
is a thin loop that calls it every tick. Tests call `run_once()` directly.

When PostgreSQL goes away mid-tick, a poll that needed it ends like a cancelled one (no
error charged to the source, its lease given back) and the tick ends with
`DatabaseUnavailable`; a lease that could not be given back expires and the source is
polled again (entries are deduplicated by URL). `run_forever()` (`frontier.loops.run_every`)
then waits with a capped exponential backoff instead of its tick until the database answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from frontier.clock import utcnow
from frontier.db import Database
from frontier.errors import DatabaseUnavailable
from frontier.fetch_log import FetchLogRepository
from frontier.loops import run_every
from frontier.parse_pool import ParsePool
from frontier.queue import QueueRepository
from frontier.queue_values import QueuePolicy
from frontier.safe_http.client import SafeClient
from frontier.source_kinds import KindRegistry, load_kinds
from frontier.sources import Source
from frontier.websub import WebSubRepository
from poller import intervals
from poller.policy import PollPolicy
from poller.poll_state import PollState, PollStateRepository
from poller.poll_summary import PollSummary
from poller.source_poll import Polled, poll_source
from poller.spread import HostSpreads

log = logging.getLogger(__name__)


def worker_id(prefix: str = "poller") -> str:
    return f"{prefix}:{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Poller:
    def __init__(
        self,
        db: Database,
        client: SafeClient,
        policy: PollPolicy | None = None,
        queue_policy: QueuePolicy | None = None,
        *,
        owner: str | None = None,
        kinds: KindRegistry | None = None,
        parser: ParsePool | None = None,
    ) -> None:
        """`parser`: where feeds and sitemaps are parsed (default: a pool of its own, under
        `policy.parse`)."""
        self.db = db
        self.kinds = kinds if kinds is not None else load_kinds()  # the installed kinds
        self.client = client
        self.policy = policy or PollPolicy()
        self.parser = parser or ParsePool(self.policy.parse)
        self.owner = owner or worker_id()
        self.states = PollStateRepository(db)
        self.spreads = HostSpreads(self.states)  # each host's sources over their interval
        self.queue = QueueRepository(db, queue_policy)
        self.subscriptions = WebSubRepository(db) if self.policy.websub.enabled else None

    async def run_once(self, *, now: datetime | None = None) -> list[PollSummary]:
        """Poll every source due now (as many as are claimable); returns one summary per
        source polled."""
        summaries: list[PollSummary] = []
        running: set[asyncio.Task[Polled]] = set()
        done_unwritten: list[Polled] = []
        limit = self.policy.concurrency
        spreads = await self.spreads.current()
        try:
            while True:
                if done_unwritten and len(running) <= limit // 2:
                    summaries.extend(await self._write(done_unwritten))
                    done_unwritten = []
                claimed = []
                # Refill at the low-water mark, not after every completion: claims and
                # state writes then come in batches instead of one transaction per poll.
                if len(running) <= limit // 2:
                    claimed = await self.states.claim_due(
                        self.owner,
                        limit - len(running),
                        lease_s=self.policy.lease_s,
                        per_key=self.policy.per_host,
                        proxy_hosts=self.policy.proxy_hosts,
                        now=now,
                    )
                for source, state in claimed:
                    placed = replace(state, spread=spreads.get(source.id))
                    running.add(asyncio.create_task(self._poll(source, placed, now)))
                if not running:
                    break
                finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                done_unwritten.extend(task.result() for task in finished)
        finally:
            if running:  # cancelled: give the leases back
                for task in running:
                    task.cancel()
                ended = await asyncio.gather(*running, return_exceptions=True)
                done_unwritten.extend(p for p in ended if isinstance(p, Polled))
            if done_unwritten:
                summaries.extend(await asyncio.shield(self._write(done_unwritten)))
        return summaries

    async def _poll(self, source: Source, state: PollState, now: datetime | None) -> Polled:
        at = now or utcnow()
        kind_due, sitemap_due = (
            _is_due(state.next_poll_at, at),
            _is_due(state.sitemap_next_poll_at, at),
        )
        try:
            return await poll_source(
                self.queue,
                self.states,
                self.client,
                self.policy,
                source,
                state,
                now=at,
                kind=kind_due,
                sitemap=sitemap_due,
                kinds=self.kinds,
                parser=self.parser,
                subscriptions=self.subscriptions,
            )
        except asyncio.CancelledError:
            return Polled(source, state, crash="cancelled")
        except DatabaseUnavailable:  # not the source's fault: no error charged; its lease
            return Polled(source, state, crash="cancelled")  # is given back when possible
        except Exception as exc:  # one broken source never stops the others
            log.exception("source %s: poll crashed", source.name)
            crash = f"{type(exc).__name__}: {exc}"
            errors = state.consecutive_errors + 1
            interval = source.feed_poll_interval_minutes * 60.0
            backed_off = replace(
                state,
                consecutive_errors=errors,
                last_error=crash,
                last_polled_at=at,
                next_poll_at=intervals.next_poll_failed(at, interval, errors),
                sitemap_next_poll_at=max(
                    state.sitemap_next_poll_at or at,
                    intervals.next_poll_failed(at, interval, errors),
                ),
            )
            return Polled(source, backed_off, crash=crash)

    async def _write(self, polled: Sequence[Polled]) -> list[PollSummary]:
        cancelled = [p.source.id for p in polled if p.crash == "cancelled"]
        written = [p for p in polled if p.crash != "cancelled"]

        async def write(tx: Database) -> None:  # a poll's state and its log rows, or neither
            states = PollStateRepository(tx)
            await states.complete(self.owner, [p.state for p in written])
            await states.release(self.owner, cancelled)
            await FetchLogRepository(tx).record([entry for p in written for entry in p.logs])

        await self.db.run_transaction(write)
        return [p.summary() for p in polled]

    async def run_forever(
        self,
        stop: asyncio.Event,
        *,
        on_polled: Callable[[list[PollSummary]], None] | None = None,
        on_failed: Callable[[Exception], None] | None = None,
    ) -> None:
        """Tick every `policy.tick_s` seconds until `stop` is set, through the project's one
        loop (`frontier.loops.run_every`: it backs off while the database is unavailable),
        and sooner when a source falls due before the next tick: a source is polled when it
        is due, not up to a tick later (and a poll later than half its interval would skip
        its next slot, poller.intervals).
        `on_polled` gets each tick's summaries, `on_failed` a tick that failed otherwise
        (defaults: the log). Once `stop` is set, the tick's polls in flight are cancelled
        (their leases given back, nothing charged to their sources, their parses killed):
        stopping never waits for a slow server or a hostile document."""
        report = on_polled or _log_polled

        async def tick() -> None:
            polls = asyncio.ensure_future(self.run_once())
            stopping = asyncio.ensure_future(stop.wait())
            try:
                await asyncio.wait({polls, stopping}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopping.cancel()
                if not polls.done():
                    polls.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await polls
            if polls.cancelled():
                return
            summaries = polls.result()
            for summary in summaries:
                summary.log()
            report(summaries)

        await run_every(
            stop,
            tick,
            self.policy.tick_s,
            self.db.outage,
            name="poller tick",
            on_error=on_failed,
            sooner=self.states.seconds_until_due,
        )


def _log_polled(summaries: list[PollSummary]) -> None:
    if summaries:
        failed = sum(1 for s in summaries if not s.ok)
        log.info("polled %d sources, %d failed", len(summaries), failed)


def _is_due(when: datetime | None, at: datetime) -> bool:
    """`when <= at`; asyncpg returns +-infinity as naive datetime.max/min."""
    if when is None:
        return True
    if when.tzinfo is None:
        return when == datetime.min
    return when <= at
