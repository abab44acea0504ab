"""Frontier statistics for `frontier status` and the API, kept fast at 10^7 URLs: counts
come from maintained counters and `host_state`, never from scanning `url_frontier`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from frontier.clock import utcnow
from frontier.db import Database
from frontier.sql import load
from frontier.states import FetchKind, LogOutcome, Origin, UrlStatus

SQL = load("stats")

# Counter deltas younger than this stay uncompacted, so recent activity can be counted.
KEEP_DELTAS = timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class HostCounts:
    known: int
    ready_now: int
    top_pending: list[dict[str, Any]]  # {"host", "pending"}, most pending first


@dataclass(frozen=True, slots=True)
class RevisitCounts:
    """Revisits (frontier.revisits) apart from first fetches."""

    waiting: int = 0  # pending URLs fetched before, due at a later step of their schedule
    due_now: int = 0  # of those, due now
    outcomes: dict[str, int] = field(default_factory=dict)  # revisits' fetch-log outcomes


@dataclass(frozen=True, slots=True)
class FrontierStats:
    """The documented shape of `frontier status --json` and `GET /api/v1/stats` (see
    `as_json`): counts by status, origin and source, due work, hosts, recent errors."""

    total: int
    by_status: dict[str, int]
    by_origin: dict[str, int]
    by_source: dict[str, int]
    due_now: int
    oldest_due_at: datetime | None
    claims_last_minute: int
    hosts: HostCounts
    recent_errors: list[dict[str, Any]]  # fetch-log rows: at (ISO), kind, url, error ...
    revisits: RevisitCounts = field(default_factory=RevisitCounts)
    page_outcomes: dict[str, int] = field(default_factory=dict)  # first fetches' outcomes

    def as_json(self) -> dict[str, Any]:
        values = asdict(self)
        values["oldest_due_at"] = self.oldest_due_at.isoformat() if self.oldest_due_at else None
        return values


class StatsRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def stats(
        self, *, now: datetime | None = None, top_hosts: int = 10, recent_errors: int = 10
    ) -> FrontierStats:
        """Counts from the maintained counters and `host_state`, at `now`."""
        now = now or utcnow()
        by_status = dict.fromkeys(UrlStatus, 0)
        by_origin = dict.fromkeys(Origin, 0)
        by_source: dict[str, int] = {}
        for row in await self._db.fetch(SQL["counts"]):
            by_status[UrlStatus(row["status"])] += row["n"]
            by_origin[Origin(row["origin"])] += row["n"]
            source = row["source"] or "(deleted)"
            by_source[source] = by_source.get(source, 0) + row["n"]
        hosts = await self._db.fetchrow(SQL["hosts"], now)
        assert hosts is not None
        top = await self._db.fetch(SQL["top_hosts"], top_hosts)
        claims = await self._db.fetchval(SQL["claims_since"], now - timedelta(minutes=1))
        errors = await self._db.fetch(SQL["recent_errors"], recent_errors)
        revisits = await self._db.fetchrow(SQL["revisits"], now)
        assert revisits is not None
        outcomes: dict[str, dict[str, int]] = {FetchKind.PAGE: {}, FetchKind.REVISIT: {}}
        for row in await self._db.fetch(SQL["fetch_outcomes"]):
            outcomes[row["kind"]][row["outcome"]] = row["n"]
        return FrontierStats(
            total=sum(by_status.values()),
            by_status={str(k): v for k, v in by_status.items()},
            by_origin={str(k): v for k, v in by_origin.items()},
            by_source=dict(sorted(by_source.items())),
            due_now=hosts["due_now"],
            oldest_due_at=hosts["oldest_due_at"],
            claims_last_minute=claims,
            hosts=HostCounts(hosts["known"], hosts["ready_now"], [dict(row) for row in top]),
            recent_errors=[{**dict(row), "at": row["at"].isoformat()} for row in errors],
            revisits=RevisitCounts(
                revisits["waiting"],
                revisits["due_now"],
                dict(sorted(outcomes[FetchKind.REVISIT].items())),
            ),
            page_outcomes=dict(sorted(outcomes[FetchKind.PAGE].items())),
        )

    async def compact(self, *, now: datetime | None = None) -> None:
        """Fold counter deltas older than KEEP_DELTAS; the services run this periodically."""
        await self._db.execute(SQL["compact_counts"], (now or utcnow()) - KEEP_DELTAS)

    async def throughput(
        self, *, now: datetime | None = None, minutes: int = 60
    ) -> list[dict[str, Any]]:
        """Poll and fetch attempts per minute over the last `minutes`, oldest first: one
        bucket per minute (empty ones included) with page fetches split into ok / error /
        other outcomes and polls (feed and sitemap) counted together."""
        now = now or utcnow()
        end = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
        start = end - timedelta(minutes=minutes)
        buckets = {
            start + timedelta(minutes=i): {
                "pages_ok": 0,
                "pages_error": 0,
                "pages_other": 0,
                "polls": 0,
            }
            for i in range(minutes)
        }
        for row in await self._db.fetch(SQL["throughput"], start, end):
            bucket = buckets.get(row["minute"])
            if bucket is None:
                continue
            if row["kind"] in (FetchKind.FEED, FetchKind.SITEMAP):
                bucket["polls"] += row["n"]
            elif row["kind"] in (FetchKind.PAGE, FetchKind.REVISIT):
                bucket[_PAGE_BUCKET.get(row["outcome"], "pages_other")] += row["n"]
        return [{"minute": minute.isoformat(), **counts} for minute, counts in buckets.items()]

    async def top_error_hosts(self, limit: int = 10) -> list[dict[str, Any]]:
        """Hosts with the most consecutive failures right now."""
        return [dict(row) for row in await self._db.fetch(SQL["top_error_hosts"], limit)]


# How a page fetch's fetch_log outcome counts in `throughput`; anything else is "other".
_PAGE_BUCKET = {
    LogOutcome.OK: "pages_ok",
    LogOutcome.NOT_MODIFIED: "pages_ok",
    LogOutcome.FAILED: "pages_error",
    LogOutcome.RATE_LIMITED: "pages_error",
    LogOutcome.REFUSED: "pages_error",
    LogOutcome.CHALLENGE: "pages_error",
}
