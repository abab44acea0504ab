"""One URL's whole story, and what a host's or a source's page shows: the rows read by key
(SQL in `frontier/sql/url_story.sql`), the document from the configured sink's reader, and
the one-sentence `Why` of `frontier.why_waiting`.

robots.txt is matched as the fetcher matches it (`frontier.robots.stored_rules_check`, in
a parse process): the edge passes `robots_allows(status, robots_txt, url)` in, with its
parse pool and user agent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from frontier.clock import utcnow
from frontier.db import Database
from frontier.documents import DocumentReader, json_ready
from frontier.politeness_key import KeyMode, KeyRepository, domain_key
from frontier.sql import load
from frontier.urls import InvalidURL, normalize_url, url_hash
from frontier.why_waiting import Cause, Why, why_host_waits, why_url_waits

SQL = load("url_story")

LOG_ROWS = 50
AHEAD_CAP = 1000  # URLs of the host counted ahead of one in its queue (a bounded read)
HOST_LOG_WALK = 20_000  # newest fetch-log rows a host page looks through
HASH_LENGTH = 64

# (robots_status, robots_txt, url): whether it allows the URL; None: not known
RobotsCheck = Callable[[str, str | None, str], Awaitable[bool | None]]


def hash_of(key: str) -> str:
    """The url_hash that `key` names: a url_hash itself, or a URL (normalised here).
    Raises InvalidURL saying why."""
    text = key.strip()
    if len(text) == HASH_LENGTH and all(c in "0123456789abcdef" for c in text):
        return text
    try:
        return url_hash(normalize_url(text))
    except InvalidURL as exc:
        reason = f"neither a url_hash (64 lowercase hex digits) nor a URL: {exc.reason}"
        raise InvalidURL(reason) from None


@dataclass(frozen=True, slots=True)
class UrlStory:
    url_hash: str
    row: dict[str, Any] | None  # the url_frontier row (None: not in the frontier)
    host: dict[str, Any] | None
    log: list[dict[str, Any]]
    document: dict[str, Any] | None
    why: Why
    politeness_key: dict[str, str] | None = None  # {mode, key} (named_key)

    def as_json(self) -> dict[str, Any]:
        row = _json(self.row) if self.row else None
        host = _json(self.host) if self.host else None
        if host is not None:
            host.pop("robots_txt", None)  # can be 500 KiB; the host page links it
        return {
            "url_hash": self.url_hash,
            "url": row["url"] if row else None,
            "fetch_url": (row["fetch_url"] or row["url"]) if row else None,
            "frontier": row,
            "host": host,
            "fetch_log": [_json(entry) for entry in self.log],
            "document": self.document,
            "politeness_key": self.politeness_key,
            "why": self.why.as_json(),
        }


@dataclass(frozen=True, slots=True)
class HostPage:
    host: dict[str, Any]
    why: Why
    in_flight: list[dict[str, Any]]
    log: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class SourcePage:
    source: dict[str, Any]
    counts: dict[str, int]
    errors: list[dict[str, Any]]
    log: list[dict[str, Any]]


class UrlStoryRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def story(
        self,
        key: str,
        *,
        documents: DocumentReader,
        robots_allows: RobotsCheck,
        key_mode: str = KeyMode.HOST,
        now: datetime | None = None,
    ) -> UrlStory:
        """The story of the URL or url_hash `key` (InvalidURL if it is neither).
        `key_mode`: FRONTIER_POLITENESS_KEY (a source may set its own)."""
        when = now or utcnow()
        digest = hash_of(key)
        record = await self._db.fetchrow(SQL["url"], digest)
        if record is None:
            why = Why(Cause.UNKNOWN_URL, "It is not in the frontier: submit it first.")
            return UrlStory(digest, None, None, [], None, why)
        row = dict(record)
        host = await self._host(row["host"])
        log = [dict(r) for r in await self._db.fetch(SQL["url_log"], row["url"], LOG_ROWS)]
        document = await documents.get(digest)
        allows = None
        if host is not None and host["robots_status"] == "ok":
            allows = await robots_allows(host["robots_status"], host["robots_txt"], row["url"])
        ahead = 0
        if row["status"] == "pending":
            ahead = await self._db.fetchval(
                SQL["ahead"], row["host"], row["priority"], row["next_fetch_at"], digest, AHEAD_CAP
            )
        why = why_url_waits(
            row,
            host,
            now=when,
            ahead=ahead,
            robots_allows=allows,
            source_name=row["source_name"],
            source_enabled=row["source_enabled"],
        )
        mode = KeyMode(row["source_politeness_key"] or key_mode)
        return UrlStory(digest, row, host, log, document, why, named_key(row["host"], mode))

    async def _host(self, host: str) -> dict[str, Any] | None:
        """The host_state row of `host`, with the state of the politeness key that
        snoozed it, if one did (`key_lease_until`, `key_next_allowed_at`)."""
        record = await self._db.fetchrow(SQL["host"], host)
        if record is None:
            return None
        row = dict(record)
        if row["busy_key"] is not None:
            state = await KeyRepository(self._db).state(row["busy_key"]) or {}
            row["key_lease_until"] = state.get("lease_until")
            row["key_next_allowed_at"] = state.get("next_allowed_at")
        return row

    async def host_page(self, host: str, *, now: datetime | None = None) -> HostPage | None:
        row = await self._host(host)
        if row is None:
            return None
        in_flight = [dict(r) for r in await self._db.fetch(SQL["in_flight_on_host"], host)]
        log = await self._db.fetch(
            SQL["host_log"], f"http://{host}/", f"https://{host}/", LOG_ROWS, HOST_LOG_WALK
        )
        why = why_host_waits(row, now=now or utcnow())
        return HostPage(row, why, in_flight, [dict(r) for r in log])

    async def source_page(self, source_id: UUID) -> SourcePage | None:
        record = await self._db.fetchrow(SQL["source"], source_id)
        if record is None:
            return None
        counts = await self.source_counts(source_id)
        errors = await self._db.fetch(SQL["source_log"], source_id, 10, True)
        log = await self._db.fetch(SQL["source_log"], source_id, LOG_ROWS, False)
        return SourcePage(dict(record), counts, [dict(r) for r in errors], [dict(r) for r in log])

    async def source_counts(self, source_id: UUID) -> dict[str, int]:
        """Source `source_id`'s URLs by status (from the maintained counters)."""
        rows = await self._db.fetch(SQL["source_counts"], source_id)
        return {r["status"]: r["n"] for r in rows}


def named_key(host: str, mode: KeyMode) -> dict[str, str] | None:
    """The politeness key of `host` in `mode`, when it is not the host itself."""
    if mode is KeyMode.HOST:
        return None
    if mode is KeyMode.DOMAIN:
        return {"mode": str(mode), "key": domain_key(host) or host}
    return {"mode": str(mode), "key": "its address, looked up before each request"}


def _json(row: dict[str, Any]) -> dict[str, Any]:
    out = json_ready(row)
    for name, value in out.items():
        if isinstance(value, datetime):
            out[name] = value.isoformat()
        elif isinstance(value, UUID):
            out[name] = str(value)
    return out
