"""Sources: where URLs come from. The built-in `manual` source receives imports and
submissions that name no source. SQL is in `frontier/sql/sources.sql`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from frontier.db import Database
from frontier.errors import FrontierError
from frontier.queue import SourceRef
from frontier.sql import load
from frontier.states import IngestionMode
from frontier.urls import InvalidURL, normalize_url

SQL = load("sources")

MANUAL = "manual"


class UnknownSource(FrontierError):
    """No source has that name or id."""


class InvalidSource(FrontierError, ValueError):
    """A source definition that cannot be stored; the message says which field and why."""


@dataclass(frozen=True, slots=True)
class Source:
    id: UUID
    name: str
    base_url: str | None
    feed_url: str | None
    sitemap_url: str | None
    ingestion_mode: IngestionMode
    feed_poll_interval_minutes: int
    priority: int
    rate_limit_ms: int | None
    fetchprotection: int
    selectors: Any
    article_url_patterns: list[str] | None
    url_filters: Any
    min_published_at: datetime | None
    keep_trailing_slash: bool
    enabled: bool
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_record(cls, record: asyncpg.Record) -> Source:
        values = dict(record)
        values["ingestion_mode"] = IngestionMode(values["ingestion_mode"])
        return cls(**values)

    @property
    def ref(self) -> SourceRef:
        return SourceRef(self.id, self.priority, self.keep_trailing_slash, self.rate_limit_ms)

    def as_json(self) -> dict[str, Any]:
        return {
            name: (str(value) if isinstance(value, UUID | datetime) else value)
            for name, value in ((n, getattr(self, n)) for n in self.__slots__)
        }


def _checked_url(field: str, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return normalize_url(value, keep_trailing_slash=True)
    except InvalidURL as exc:
        raise InvalidSource(f"{field}: {exc.reason}") from None


class SourceRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(
        self,
        name: str,
        *,
        base_url: str | None = None,
        feed_url: str | None = None,
        sitemap_url: str | None = None,
        mode: IngestionMode = IngestionMode.FEED,
        priority: int = 5,
        interval_minutes: int = 15,
        rate_limit_ms: int | None = None,
        article_patterns: list[str] | None = None,
    ) -> Source:
        name = name.strip()
        if not 1 <= len(name) <= 200:
            raise InvalidSource("name: must be 1 to 200 characters")
        if not 1 <= priority <= 10:
            raise InvalidSource("priority: must be between 1 and 10")
        if not 1 <= interval_minutes <= 43_200:
            raise InvalidSource("interval: must be between 1 and 43200 minutes")
        if rate_limit_ms is not None and rate_limit_ms < 0:
            raise InvalidSource("rate_limit_ms: must not be negative")
        record = await self._db.fetchrow(
            SQL["insert"], name, _checked_url("base_url", base_url),
            _checked_url("feed_url", feed_url), _checked_url("sitemap_url", sitemap_url),
            str(mode), interval_minutes, priority, rate_limit_ms, article_patterns,
        )  # fmt: skip
        if record is None:
            raise InvalidSource(f"name: a source named {name!r} already exists")
        return Source.from_record(record)

    async def get(self, name: str) -> Source:
        record = await self._db.fetchrow(SQL["by_name"], name)
        if record is None:
            raise UnknownSource(f"no source named {name!r} (see `frontier sources list`)")
        return Source.from_record(record)

    async def list(self) -> list[Source]:
        return [Source.from_record(r) for r in await self._db.fetch(SQL["list"])]

    async def remove(self, name: str) -> None:
        if name == MANUAL:
            raise InvalidSource("the built-in source 'manual' cannot be removed")
        if await self._db.fetchrow(SQL["delete"], name) is None:
            raise UnknownSource(f"no source named {name!r}")

    # -- by id, with every editable column (the HTTP API) ---------------------------------

    async def get_by_id(self, source_id: UUID) -> Source:
        record = await self._db.fetchrow(SQL["by_id"], source_id)
        if record is None:
            raise UnknownSource(f"no source with id {source_id}")
        return Source.from_record(record)

    async def create(self, fields: Mapping[str, Any]) -> Source:
        """Insert a source from EDITABLE columns (missing ones take their defaults)."""
        if "name" not in fields:
            raise InvalidSource("name: required")
        values = _validated(fields)
        try:
            record = await self._db.fetchrow(
                SQL["insert_full"], *(values.get(column) for column in EDITABLE)
            )
        except asyncpg.CheckViolationError as exc:
            raise InvalidSource(f"{_constraint_field(exc)}: value out of range") from None
        if record is None:
            raise InvalidSource(f"name: a source named {values['name']!r} already exists")
        return Source.from_record(record)

    async def update(self, source_id: UUID, changes: Mapping[str, Any]) -> Source:
        """Set the EDITABLE columns named in `changes`; the others keep their value."""
        values = _validated(changes)
        if "name" in values:
            current = await self.get_by_id(source_id)
            if current.name == MANUAL and values["name"] != MANUAL:
                raise InvalidSource("name: the built-in source 'manual' cannot be renamed")
        try:
            record = await self._db.fetchrow(
                SQL["update_by_id"], source_id, list(values),
                *(values.get(column) for column in EDITABLE),
            )  # fmt: skip
        except asyncpg.UniqueViolationError:
            raise InvalidSource(
                f"name: a source named {values.get('name')!r} already exists"
            ) from None
        except asyncpg.CheckViolationError as exc:
            raise InvalidSource(f"{_constraint_field(exc)}: value out of range") from None
        if record is None:
            raise UnknownSource(f"no source with id {source_id}")
        return Source.from_record(record)

    async def delete_by_id(self, source_id: UUID) -> None:
        """Delete a source; its URLs stay in the frontier without one."""
        source = await self.get_by_id(source_id)
        if source.name == MANUAL:
            raise InvalidSource("id: the built-in source 'manual' cannot be removed")
        if await self._db.fetchrow(SQL["delete_by_id"], source_id) is None:
            raise UnknownSource(f"no source with id {source_id}")


# The columns `create` and `update` accept, in the parameter order of sources.sql.
EDITABLE = (
    "name", "base_url", "feed_url", "sitemap_url", "ingestion_mode",
    "feed_poll_interval_minutes", "priority", "rate_limit_ms", "fetchprotection", "selectors",
    "article_url_patterns", "url_filters", "min_published_at", "keep_trailing_slash", "enabled",
)  # fmt: skip
_RANGES = {
    "feed_poll_interval_minutes": (1, 43_200),
    "priority": (1, 10),
    "rate_limit_ms": (0, 2**31 - 1),
    "fetchprotection": (0, 2),
}


def _validated(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Check and normalise EDITABLE columns; InvalidSource names the first bad field."""
    values: dict[str, Any] = {}
    for column, value in fields.items():
        if column not in EDITABLE:
            raise InvalidSource(f"{column}: not a source column that can be set")
        if column == "name":
            if value is None or not 1 <= len(str(value).strip()) <= 200:
                raise InvalidSource("name: must be 1 to 200 characters")
            value = str(value).strip()
        elif column in ("base_url", "feed_url", "sitemap_url"):
            value = _checked_url(column, value)
        elif column == "ingestion_mode" and value is not None:
            try:
                value = str(IngestionMode(value))
            except ValueError:
                raise InvalidSource(f"{column}: must be one of feed, spider, both") from None
        elif column in _RANGES and value is not None:
            low, high = _RANGES[column]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InvalidSource(f"{column}: must be an integer from {low} to {high}")
        elif column == "article_url_patterns" and value is not None:
            for pattern in value:
                _check_regex(column, pattern)
        elif column == "url_filters" and value is not None:
            for key in ("include", "exclude"):
                for pattern in value.get(key) or ():
                    _check_regex(f"url_filters.{key}", pattern)
        values[column] = value
    return values


def _check_regex(field: str, pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise InvalidSource(f"{field}: {pattern!r} is not a valid regex ({exc})") from None


def _constraint_field(exc: asyncpg.CheckViolationError) -> str:
    """The column a CHECK constraint of `sources` guards (e.g. sources_priority_check)."""
    name = getattr(exc, "constraint_name", None) or ""
    return name.removeprefix("sources_").removesuffix("_check") or "source"
