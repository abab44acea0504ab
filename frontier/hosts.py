"""Host state as the fetcher uses it: robots.txt state per host, the host lease held while
one worker fetches a host's robots.txt, and the start of requests, which moves a host's
`next_allowed_at` past each request as it really starts. SQL is in `frontier/sql/hosts.sql`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import asyncpg

from frontier.buckets import bucket_of, by_bucket
from frontier.db import Database
from frontier.sql import load
from frontier.states import RobotsStatus

SQL = load("hosts")


@dataclass(frozen=True, slots=True)
class HostContext:
    """One host_state row as read right after a claim; `now` is the database clock."""

    host: str
    delay_ms: int
    next_allowed_at: datetime
    backoff_until: datetime | None
    robots_status: RobotsStatus
    robots_txt: str | None
    robots_fetched_at: datetime | None
    robots_ttl_hours: int
    robots_retry_at: datetime | None
    robots_failures: int
    lease_owner: str | None
    lease_until: datetime | None
    now: datetime

    @classmethod
    def from_record(cls, record: asyncpg.Record) -> HostContext:
        values = dict(record)
        values["robots_status"] = RobotsStatus(values["robots_status"])
        return cls(**values)

    def robots_needed(self) -> bool:
        """Whether robots.txt must be fetched (again) before a page of this host."""
        if self.robots_status is RobotsStatus.UNKNOWN or self.robots_fetched_at is None:
            return True
        if self.robots_status is RobotsStatus.DISALLOW_ALL:
            return self.robots_retry_at is None or self.robots_retry_at <= self.now
        return self.robots_fetched_at + timedelta(hours=self.robots_ttl_hours) <= self.now


@dataclass(frozen=True, slots=True)
class RobotsRecord:
    """The outcome of one robots.txt fetch, as stored."""

    host: str
    status: RobotsStatus
    robots_txt: str | None = None
    http_status: int | None = None
    error: str | None = None
    crawl_delay_ms: int | None = None
    sitemaps: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StoredRobots:
    host: str
    retry_at: datetime | None  # disallow_all: when robots.txt is fetched again
    delay_ms: int  # the host's delay, with its new Crawl-delay
    now: datetime


class HostRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def context(
        self, hosts: Sequence[str], *, now: datetime | None = None
    ) -> dict[str, HostContext]:
        records = await self._db.fetch(SQL["context"], list(hosts), now)
        return {r["host"]: HostContext.from_record(r) for r in records}

    async def take_leases(
        self,
        seen: Mapping[str, datetime | None],
        owner: str,
        seconds: float,
        *,
        now: datetime | None = None,
    ) -> set[str]:
        """Lease hosts (not claimable while leased) to fetch their robots.txt; `seen` maps
        each host to the robots_fetched_at that made the caller want it. Returns those now
        leased to `owner`: not those leased to another, nor those whose robots.txt was
        stored since (hosts.sql `take_leases`)."""
        if not seen:
            return set()
        leased: set[str] = set()
        for bucket, hosts in await self._by_bucket(sorted(seen)):
            records = await self._db.fetch(
                SQL["take_leases"], hosts, owner, seconds, now, [seen[h] for h in hosts], bucket
            )
            leased.update(r["host"] for r in records)
        return leased

    async def release_leases(self, hosts: Sequence[str], owner: str) -> None:
        for bucket, group in await self._by_bucket(sorted(hosts)):
            await self._db.execute(SQL["release_leases"], group, owner, bucket)

    async def _by_bucket(self, hosts: Sequence[str]) -> list[tuple[int, list[str]]]:
        """`hosts` split by bucket (frontier/buckets.py), each group in the given order."""
        if not hosts:
            return []
        groups = by_bucket(hosts, str, await self._db.buckets())
        return sorted(groups.items())

    async def store_robots(
        self,
        records: Sequence[RobotsRecord],
        *,
        ttl_hours: int,
        retry_base_s: float,
        now: datetime | None = None,
    ) -> dict[str, StoredRobots]:
        if not records:
            return {}
        by_host = {r.host: r for r in records}
        result: dict[str, StoredRobots] = {}
        for bucket, hosts in await self._by_bucket(sorted(by_host)):
            ordered = [by_host[h] for h in hosts]
            stored = await self._db.fetch(
                SQL["store_robots"],
                [r.host for r in ordered],
                [str(r.status) for r in ordered],
                [r.robots_txt for r in ordered],
                [r.http_status for r in ordered],
                [r.error for r in ordered],
                [r.crawl_delay_ms for r in ordered],
                ["\n".join(r.sitemaps) for r in ordered],
                ttl_hours,
                retry_base_s,
                now,
                bucket,
            )
            for r in stored:
                result[r["host"]] = StoredRobots(
                    r["host"], r["robots_retry_at"], r["delay_ms"], r["now"]
                )
        return result

    async def begin_requests(
        self,
        slots: Sequence[tuple[str, datetime]],
        owner: str,
        *,
        margin_ms: int = 100,
        now: datetime | None = None,
    ) -> dict[str, RequestStart]:
        """For (host, end of the slot its claim reserved) pairs: whether a request may go
        now, and within what margin of asking. Those that may have the host's next slot
        moved past now (see hosts.sql)."""
        if not slots:
            return {}
        slot_ends = dict(sorted(slots))
        go: dict[str, RequestStart] = {}
        for bucket, hosts in await self._by_bucket(sorted(slot_ends)):
            records = await self._db.fetch(
                SQL["begin_requests"],
                hosts,
                [slot_ends[h] for h in hosts],
                owner,
                margin_ms,
                now,
                bucket,
            )
            go.update((r["host"], RequestStart(r["go"], r["margin_ms"])) for r in records)
        return go

    async def due_now(self, *, now: datetime | None = None) -> bool:
        due: bool = await self._db.fetchval(SQL["due_now"], now)
        return due

    async def sitemaps(self, hosts: Sequence[str]) -> dict[str, list[str]]:
        """The Sitemap: lines each host's robots.txt gave (hosts without any are left out)."""
        records = await self._db.fetch(SQL["sitemaps"], list(hosts))
        return {r["host"]: list(r["robots_sitemaps"]) for r in records}

    async def take_slot(
        self,
        host: str,
        *,
        new_host_delay_ms: int,
        margin_ms: int,
        now: datetime | None = None,
    ) -> HostSlot:
        """Take `host`'s request slot for a request about to start, if it is due (see
        `take_slot` in hosts.sql); the row is created with `new_host_delay_ms` if missing."""
        bucket = bucket_of(host, await self._db.buckets())
        record = await self._db.fetchrow(
            SQL["take_slot"], host, new_host_delay_ms, margin_ms, now, bucket
        )
        assert record is not None
        if record["taken"]:
            return HostSlot(True, margin_ms=record["margin_ms"])
        return HostSlot(False, record["wait_s"], record["reason"])


@dataclass(frozen=True, slots=True)
class RequestStart:
    """What `HostRepository.begin_requests` answered for a host: whether its request may
    go, and the margin its slot keeps on top of the delay (None: no delay to keep). The
    request must start within that margin of the moment the statement was sent, or the
    next requester's turn may come less than the delay after it."""

    go: bool
    margin_ms: int | None = None


@dataclass(frozen=True, slots=True)
class HostSlot:
    """What `HostRepository.take_slot` answered: the slot is taken (and must be used
    within `margin_ms` of asking, as a `RequestStart`), or the host may be free in `wait_s`
    seconds; `reason` says what it waits for: "delay", "backoff" or "lease"."""

    taken: bool
    wait_s: float = 0.0
    reason: str | None = None
    margin_ms: int | None = None


def send_by(asked: float, margin_ms: int | None) -> float | None:
    """The monotonic time by which a request must have started, when the statement that
    took its slot was sent at `asked` and the slot keeps `margin_ms` on top of the delay
    (None: no delay, no deadline). The slot moved the host's next turn to the delay and the
    margin after the statement read its clock, which it did after `asked`: a request that
    starts within the margin of `asked` starts at least the delay before that turn,
    whatever the statement waited for (a row lock, the commit) and however late its answer
    was read."""
    return None if margin_ms is None else asked + margin_ms / 1000


SLOT_DELAY, SLOT_BACKOFF, SLOT_LEASE = "delay", "backoff", "lease"  # HostSlot.reason
