"""`PollState`, what the poller remembers about a source between polls, whatever its kind
(the kind's document and the source's sitemaps), and its repository: claim due sources
with a poll lease, write poll outcomes in batches, take a source for a manual fire. The
table keeps its first name, `feed_state`; SQL is in `frontier/sql/feeds.sql`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from frontier.db import Database
from frontier.sources import Source, SourceRepository
from frontier.sql import load
from poller.intervals import Spread

SQL = load("feeds")


@dataclass(frozen=True, slots=True)
class PollState:
    """One `feed_state` row: what the poller remembers about a source between polls."""

    source_id: UUID
    feed_url: str | None = None
    last_polled_at: datetime | None = None
    last_etag: str | None = None
    last_modified: str | None = None
    last_item_count: int | None = None
    consecutive_errors: int = 0
    last_error: str | None = None
    next_poll_at: datetime | None = None
    sitemap_next_poll_at: datetime | None = None
    sitemap_etag: str | None = None
    sitemap_last_modified: str | None = None
    last_outcome: str | None = None
    interval_s: int | None = None
    min_interval_s: int | None = None
    feed_cursor_at: datetime | None = None
    sitemap_location: str | None = None
    sitemap_cursor_at: datetime | None = None
    sitemap_consecutive_errors: int = 0
    sitemap_last_error: str | None = None
    discovery_attempted_at: datetime | None = None
    last_body_digest: str | None = None  # SHA-256 of the main document last read
    # Read-only here: adaptive_interval is the source's configuration (SourceRepository);
    # the others are written by their own statements.
    adaptive_interval: bool = False
    poll_lease_until: datetime | None = None
    poll_lease_owner: str | None = None
    last_fired_at: datetime | None = None
    disabled_reason: str | None = None
    disabled_at: datetime | None = None
    # Not a column: the source's place among its host's sources, which the poller knows
    # (poller.spread); None: its phase is its id's (poller.intervals).
    spread: Spread | None = None

    @classmethod
    def from_record(cls, record: asyncpg.Record) -> PollState:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in dict(record).items() if k in names})


# The columns `complete_many` writes, in its parameter order ($3 onwards).
_WRITTEN = (
    "feed_url",
    "last_polled_at",
    "last_etag",
    "last_modified",
    "last_item_count",
    "consecutive_errors",
    "last_error",
    "next_poll_at",
    "sitemap_next_poll_at",
    "sitemap_etag",
    "sitemap_last_modified",
    "last_outcome",
    "interval_s",
    "min_interval_s",
    "feed_cursor_at",
    "sitemap_location",
    "sitemap_cursor_at",
    "sitemap_consecutive_errors",
    "sitemap_last_error",
    "discovery_attempted_at",
    "last_body_digest",
)
MAX_ERROR_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class FireTicket:
    claimed: bool
    last_fired_at: datetime | None
    lease_until: datetime | None
    now: datetime


class PollStateRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def claim_due(
        self,
        owner: str,
        limit: int,
        *,
        lease_s: float,
        per_key: int,
        proxy_hosts: Sequence[str] = (),
        now: datetime | None = None,
    ) -> list[tuple[Source, PollState]]:
        """Lease up to `limit` due sources (at most `per_key` per host at once)."""

        async def work(tx: Database) -> list[asyncpg.Record]:
            await tx.execute(SQL["claim_lock"])
            due = await tx.fetch(SQL["claim_due"], limit, now, per_key, list(proxy_hosts))
            if not due:
                return []
            ids = [r["source_id"] for r in due]
            return await tx.fetch(SQL["lease_sources"], ids, owner, lease_s, now)

        records = await self._db.run_transaction(work)
        if not records:
            return []
        states = {r["source_id"]: PollState.from_record(r) for r in records}
        by_id = {s.id: s for s in await SourceRepository(self._db).get_many(list(states))}
        return [(by_id[i], state) for i, state in states.items() if i in by_id]

    async def polled_urls(self) -> list[tuple[UUID, str | None]]:
        """(source id, URL) of every source the poller polls, due or not."""
        return [(r["id"], r["url"]) for r in await self._db.fetch(SQL["polled_urls"])]

    async def seconds_until_due(self, now: datetime | None = None) -> float | None:
        """Seconds until the next source nobody holds is due (negative: one is due now);
        None when there is none."""
        return await self._db.fetchval(SQL["seconds_until_due"], now)

    async def get(self, source_id: UUID) -> tuple[Source, PollState] | None:
        sources = await SourceRepository(self._db).get_many([source_id])
        state = await self._db.fetchrow(SQL["state_by_source"], source_id)
        if not sources or state is None:
            return None
        return sources[0], PollState.from_record(state)

    async def complete(self, owner: str, states: Sequence[PollState]) -> set[UUID]:
        """Write new states and free the leases still held by `owner`; returns the ids
        written (a lease lost to expiry is not overwritten)."""
        if not states:
            return set()
        columns: list[list[Any]] = [[s.source_id for s in states]]
        for name in _WRITTEN:
            values = [getattr(s, name) for s in states]
            if name in ("last_error", "sitemap_last_error"):
                values = [v[:MAX_ERROR_CHARS] if v else v for v in values]
            columns.append(values)
        records = await self._db.fetch(SQL["complete_many"], columns[0], owner, *columns[1:])
        return {r["source_id"] for r in records}

    async def release(self, owner: str, source_ids: Sequence[UUID]) -> None:
        if source_ids:
            await self._db.execute(SQL["release"], list(source_ids), owner)

    async def fire_claim(
        self,
        source_id: UUID,
        owner: str,
        *,
        rate_s: float,
        lease_s: float,
        now: datetime | None = None,
    ) -> FireTicket | None:
        record = await self._db.fetchrow(SQL["fire_claim"], source_id, now, rate_s, lease_s, owner)
        if record is None:
            return None
        return FireTicket(
            record["claimed"], record["last_fired_at"], record["poll_lease_until"], record["now"]
        )

    # A poll's changes to its source go through the sources' one owner, on this
    # repository's database (the poller's transaction, when it runs in one).

    async def set_feed_url(self, source_id: UUID, url: str) -> None:
        await SourceRepository(self._db).set_feed_url(source_id, url)

    async def disable(self, source_id: UUID, reason: str, *, now: datetime | None = None) -> None:
        await SourceRepository(self._db).disable(source_id, reason, now=now)
