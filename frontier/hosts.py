"""Host state as its requesters use it: robots.txt state per host, and the host's hold:
whoever sends a host a request holds it until the answer is in, then releases it, and the
next request waits the host's delay after that answer (frontier/sql/hosts.sql's header).
A fetcher's claim takes the hold (queue.sql `claim`); `take_slot` is for a requester
without a claim; `release_slots` gives holds back. SQL is in `frontier/sql/hosts.sql`.
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

    async def release_slots(
        self,
        holds: Mapping[str, str],
        *,
        snoozed: Mapping[str, KeyBusy] | None = None,
        now: datetime | None = None,
    ) -> int:
        """The answers from the hosts of `holds` (host -> its holder) are in: each holder
        gives its host back, and the host's next request may start its delay after now
        (hosts.sql `release_slots`). A host in `snoozed` sent nothing, its politeness key
        being busy: it is given back snoozed until the key may be free instead. Returns
        how many holds were given back (a host held by anyone else is left alone)."""
        released = 0
        snoozed = snoozed or {}
        for bucket, group in await self._by_bucket(sorted(holds)):
            busy = [snoozed.get(h) for h in group] if snoozed else []
            record = await self._db.fetchrow(
                SQL["release_slots"],
                group,
                [holds[h] for h in group],
                bucket,
                now,
                [b.wait_s if b else None for b in busy],
                [b.key if b else None for b in busy],
            )
            assert record is not None
            released += record["released"]
        return released

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
        owner: str,
        *,
        new_host_delay_ms: int,
        lease_s: float,
        now: datetime | None = None,
    ) -> HostSlot:
        """Take `host`'s hold for one request `owner` is about to send, if the host is free
        (see `take_slot` in hosts.sql); the row is created with `new_host_delay_ms` if
        missing. A slot `held` must be given back with `release_slots` once the answer is
        in; the lease ends it otherwise."""
        bucket = bucket_of(host, await self._db.buckets())
        record = await self._db.fetchrow(
            SQL["take_slot"], host, new_host_delay_ms, owner, now, bucket, lease_s
        )
        assert record is not None
        if record["taken"]:
            return HostSlot(True, held=record["held"], delay_ms=record["delay_ms"])
        return HostSlot(False, record["wait_s"], record["reason"])


@dataclass(frozen=True, slots=True)
class KeyBusy:
    """A host's politeness key is busy: its request is not sent, and the host is given
    back snoozed for `wait_s` (until the key may be free: frontier.politeness_key)."""

    key: str
    wait_s: float


@dataclass(frozen=True, slots=True)
class HostSlot:
    """What `HostRepository.take_slot` answered: the slot is taken (`held`: the host is
    held until `release_slots`; a host without a delay is not), or the host may be free in
    `wait_s` seconds; `reason` says what it waits for: "delay", "backoff" or "held" (another
    requester's request is in flight: `wait_s` is then when its lease would expire, and the
    host is usually free much sooner)."""

    taken: bool
    wait_s: float = 0.0
    reason: str | None = None
    held: bool = False
    delay_ms: int = 0  # the host's delay, when taken


SLOT_DELAY, SLOT_BACKOFF, SLOT_HELD = "delay", "backoff", "held"  # HostSlot.reason
