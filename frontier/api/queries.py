"""The API's read queries, what the routes and the dashboard need beyond `frontier.stats`:
keyset pages of the frontier, sources with their poll state, and the event counters behind
/metrics. SQL is in `frontier/sql/api.sql`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from frontier.clock import utcnow
from frontier.db import Database
from frontier.sql import load

SQL = load("api")

# Rows walked per filtered page at most: bounds the time of a page whatever the filter.
SCAN_BUDGET = 20_000
# Event deltas younger than this are kept apart; older ones are folded on each scrape.
KEEP_EVENT_DELTAS = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class FrontierFilter:
    status: str | None = None
    host: str | None = None
    source_id: UUID | None = None

    @property
    def empty(self) -> bool:
        return self.status is None and self.host is None and self.source_id is None


@dataclass(frozen=True, slots=True)
class Page:
    items: list[dict[str, Any]]
    next: str | None
    scanned: int


class ApiQueries:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def frontier_page(
        self,
        where: FrontierFilter,
        *,
        after: str | None,
        limit: int,
        scan_budget: int = SCAN_BUDGET,
    ) -> Page:
        """Up to `limit` rows after `after` (a url_hash) in url_hash order. With filters, at
        most `scan_budget` rows are walked; `next` then continues the walk."""
        budget = limit if where.empty else max(scan_budget, limit)
        record = await self._db.fetchrow(
            SQL["frontier_page"],
            after or "",
            budget,
            where.status,
            where.host,
            where.source_id,
            limit,
        )
        assert record is not None
        items: list[dict[str, Any]] = record["items"]
        if len(items) == limit:
            next_after = items[-1]["url_hash"]
        elif record["scanned"] == budget:
            next_after = record["scanned_to"]
        else:
            next_after = None
        return Page(items, next_after, record["scanned"])

    async def sources_overview(self, limit: int = 50) -> tuple[int, list[dict[str, Any]]]:
        total = await self._db.fetchval(SQL["source_count"])
        rows = await self._db.fetch(SQL["sources_overview"], limit)
        return total, [dict(row) for row in rows]

    async def queue_depth(self) -> list[dict[str, Any]]:
        return [dict(row) for row in await self._db.fetch(SQL["queue_depth"])]

    async def event_totals(self, *, now: datetime | None = None) -> list[dict[str, Any]]:
        """Cumulative event counts; folds deltas older than KEEP_EVENT_DELTAS first."""
        await self._db.execute(SQL["fold_events"], (now or utcnow()) - KEEP_EVENT_DELTAS)
        return [dict(row) for row in await self._db.fetch(SQL["event_totals"])]

    async def metrics_hosts(self, now: datetime) -> dict[str, Any]:
        """Hosts backing off and the earliest due time, from the host summaries."""
        row = await self._db.fetchrow(SQL["metrics_hosts"], now)
        assert row is not None
        return dict(row)

    async def metrics_politeness(self, now: datetime) -> list[dict[str, Any]]:
        """Hosts with due work held back by politeness at `now`, by reason."""
        return [dict(row) for row in await self._db.fetch(SQL["metrics_politeness"], now)]

    async def failing_sources(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Enabled sources whose last poll or spider run failed, with the cause."""
        return [dict(row) for row in await self._db.fetch(SQL["failing_sources"], limit)]

    async def spider_runs(self, limit: int) -> list[dict[str, Any]]:
        return [dict(row) for row in await self._db.fetch(SQL["spider_runs"], limit)]

    async def hosts_backing_off(self, now: datetime, limit: int) -> list[dict[str, Any]]:
        return [dict(row) for row in await self._db.fetch(SQL["hosts_backing_off"], now, limit)]
