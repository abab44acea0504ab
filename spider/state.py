"""The spider's repository: per-source schedule and run state (`spider_state`) and the
listing pages seen so far (`spider_pages`). SQL is in `frontier/sql/spider.sql`. A
source's spider options (interval, external links, listing pages) are its configuration,
written by `frontier.sources.SourceRepository`; they are read here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from frontier.db import Database
from frontier.source_schema import parse_patch
from frontier.sources import SourceRepository
from frontier.sql import load

SQL = load("spider")

DEFAULT_INTERVAL_MINUTES = 24 * 60


@dataclass(frozen=True, slots=True)
class SpiderOptions:
    """A source's spider options, kept in `spider_state`."""

    interval_minutes: int = DEFAULT_INTERVAL_MINUTES
    allow_external: bool = False
    listing_urls: tuple[str, ...] = ()
    next_run_at: datetime | None = None
    last_run_at: datetime | None = None
    last_outcome: str | None = None
    last_summary: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class PageState:
    """What the last check of one listing page found."""

    url: str
    etag: str | None
    last_modified: str | None
    links_hash: str | None
    children: tuple[str, ...]
    checked_at: datetime
    changed_at: datetime


@dataclass(frozen=True, slots=True)
class PageCheck:
    """One check of a listing page, to be saved. `links_hash` None: not modified (304), the
    stored links stand."""

    url: str
    etag: str | None
    last_modified: str | None
    links_hash: str | None
    children: tuple[str, ...] = ()


class SpiderRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def ensure(self, source_ids: Sequence[UUID]) -> None:
        await self._db.execute(SQL["ensure_states"], list(source_ids))

    async def options(self, source_id: UUID) -> SpiderOptions:
        await self.ensure([source_id])
        record = await self._db.fetchrow(SQL["state"], source_id)
        assert record is not None
        next_run = record["spider_next_run_at"]
        return SpiderOptions(
            interval_minutes=record["interval_minutes"],
            allow_external=record["allow_external"],
            listing_urls=tuple(record["listing_urls"]),
            next_run_at=next_run if next_run.year > 1 else None,  # -infinity: never run
            last_run_at=record["last_run_at"],
            last_outcome=record["last_outcome"],
            last_summary=record["last_summary"],
        )

    async def configure(
        self,
        source_id: UUID,
        *,
        interval_minutes: int | None = None,
        allow_external: bool | None = None,
        listing_urls: Sequence[str] | None = None,
    ) -> None:
        """Change a source's spider options (None: unchanged). They are part of the
        source's configuration, so they are checked by its schema and written by its
        repository; the spider owns only the run state of its rows."""
        given = {
            "spider_interval_minutes": interval_minutes,
            "spider_allow_external": allow_external,
            "spider_listing_urls": list(listing_urls) if listing_urls is not None else None,
        }
        patch = parse_patch({key: value for key, value in given.items() if value is not None})
        await SourceRepository(self._db).update(source_id, patch)

    async def claim_due(self, limit: int = 1000, *, now: datetime | None = None) -> list[UUID]:
        """The due spider/both sources, each moved a full interval ahead as it is taken."""
        await self._db.execute(SQL["ensure_due_states"])
        records = await self._db.fetch(SQL["claim_due"], now, limit)
        return [record["source_id"] for record in records]

    async def finish_run(
        self,
        source_id: UUID,
        started_at: datetime,
        outcome: str,
        summary: dict[str, Any],
        *,
        now: datetime | None = None,
    ) -> None:
        await self._db.execute(SQL["finish_run"], source_id, started_at, outcome, summary, now)

    async def pages(self, source_id: UUID) -> dict[str, PageState]:
        records = await self._db.fetch(SQL["pages"], source_id)
        return {
            r["url"]: PageState(
                r["url"],
                r["etag"],
                r["last_modified"],
                r["links_hash"],
                tuple(r["children"]),
                r["checked_at"],
                r["changed_at"],
            )
            for r in records
        }

    async def save_pages(
        self, source_id: UUID, checks: Sequence[PageCheck], *, now: datetime | None = None
    ) -> None:
        if not checks:
            return
        latest = {check.url: check for check in checks}  # one row per URL per statement
        await self._db.execute(
            SQL["save_pages"],
            source_id,
            [c.url for c in latest.values()],
            [c.etag for c in latest.values()],
            [c.last_modified for c in latest.values()],
            [c.links_hash for c in latest.values()],
            ["\n".join(c.children) for c in latest.values()],
            now,
        )
