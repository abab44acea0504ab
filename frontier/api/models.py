"""Pydantic models of the API's request and response bodies (they make /openapi.json)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, field_validator

from frontier.states import IngestionMode

MAX_PATTERNS = 200


def _regexes(values: list[str]) -> list[str]:
    for index, pattern in enumerate(values):
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"item {index}: {pattern!r} is not a valid regex ({exc})") from None
    return values


class ErrorField(BaseModel):
    field: str = Field(description="The offending input, dotted for nested ones.")
    message: str


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable, machine-readable: validation_error, unauthorized...")
    message: str
    fields: list[ErrorField] = []


class ErrorBody(BaseModel):
    """The shape of every error answer."""

    error: ErrorDetail


class Selectors(BaseModel):
    """CSS selectors for the fields of an article page."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, max_length=1000)
    body: str | None = Field(default=None, max_length=1000)
    author: str | None = Field(default=None, max_length=1000)
    published: str | None = Field(default=None, max_length=1000)
    image: str | None = Field(default=None, max_length=1000)


class UrlFilters(BaseModel):
    """Which discovered URLs a source keeps: regexes to include/exclude, and keywords."""

    model_config = ConfigDict(extra="forbid")

    include: list[str] = Field(default_factory=list, max_length=MAX_PATTERNS)
    exclude: list[str] = Field(default_factory=list, max_length=MAX_PATTERNS)
    keywords: list[str] = Field(default_factory=list, max_length=MAX_PATTERNS)

    _check_include = field_validator("include", "exclude")(_regexes)


class SourceFields(BaseModel):
    """Editable columns of a source; on PATCH, only the fields sent change. A non-nullable
    column's `None` default means "not sent" (null itself is refused by its type)."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = Field(default=None, max_length=4096)
    feed_url: str | None = Field(default=None, max_length=4096)
    sitemap_url: str | None = Field(default=None, max_length=4096)
    ingestion_mode: IngestionMode = Field(default=None)  # type: ignore[assignment]
    feed_poll_interval_minutes: int = Field(default=None, ge=1, le=43_200)  # type: ignore[assignment]
    priority: int = Field(default=None, ge=1, le=10)  # type: ignore[assignment]
    rate_limit_ms: int | None = Field(default=None, ge=0, le=2**31 - 1)
    fetchprotection: int = Field(default=None, ge=0, le=2)  # type: ignore[assignment]
    selectors: Selectors | None = None
    article_url_patterns: list[str] | None = Field(default=None, max_length=MAX_PATTERNS)
    url_filters: UrlFilters | None = None
    min_published_at: datetime | None = None
    keep_trailing_slash: bool = Field(default=None)  # type: ignore[assignment]
    enabled: bool = Field(default=None)  # type: ignore[assignment]

    @field_validator("article_url_patterns")
    @classmethod
    def _patterns(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _regexes(value)

    def changes(self) -> dict[str, Any]:
        """The fields the client sent, as column values."""
        out = self.model_dump(exclude_unset=True, mode="python")
        for key in ("selectors", "url_filters"):
            if out.get(key) is not None:
                out[key] = {k: v for k, v in out[key].items() if v not in (None, [])}
        if out.get("ingestion_mode") is not None:
            out["ingestion_mode"] = str(out["ingestion_mode"])
        return out


class SourceCreate(SourceFields):
    name: str = Field(min_length=1, max_length=200)


class SourcePatch(SourceFields):
    name: str = Field(default=None, min_length=1, max_length=200)  # type: ignore[assignment]


class SourceOut(BaseModel):
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
    selectors: dict[str, Any] | None
    article_url_patterns: list[str] | None
    url_filters: dict[str, Any] | None
    min_published_at: datetime | None
    keep_trailing_slash: bool
    enabled: bool
    created_at: datetime
    updated_at: datetime


class ImportErrorLine(BaseModel):
    line: int = Field(description="1-based line (or position in the JSON `urls` array).")
    reason: str


class ImportResult(BaseModel):
    accepted: int = Field(description="New URLs added to the frontier.")
    duplicate: int = Field(description="Lines whose URL was known already or repeated.")
    rejected: int = Field(description="Lines that are not usable URLs.")
    errors: list[ImportErrorLine] = Field(description="The first 1,000 rejections.")


class FrontierRow(BaseModel):
    url_hash: str
    url: str
    host: str
    source_id: UUID | None
    source_name: str | None
    origin: str
    status: str
    priority: int
    depth: int
    next_fetch_at: datetime
    last_fetched_at: datetime | None
    fetch_count: int
    retry_count: int
    last_error: str | None
    dead_reason: str | None
    http_status: int | None
    final_url: str | None
    created_at: datetime
    updated_at: datetime


class FrontierPage(BaseModel):
    items: list[FrontierRow]
    next: str | None = Field(
        description="Pass as `after` for the next page; null at the end. A page may hold "
        "fewer than `limit` rows (even none) before the end when filters are sparse."
    )
    scanned: int = Field(description="Frontier rows walked to build this page.")


class FetchLogRow(BaseModel):
    id: int
    kind: str
    source_id: UUID | None
    source_name: str | None
    url: str
    outcome: str
    http_status: int | None
    items_seen: int | None
    items_new: int | None
    elapsed_ms: int | None
    error: str | None
    at: datetime


class FetchLogPage(BaseModel):
    items: list[FetchLogRow]
    next_before_id: int | None = Field(
        description="Pass as `before_id` for older rows; null when there are none."
    )


class Health(BaseModel):
    status: str
    database: str


class Stats(BaseModel):
    """The shape of `frontier status --json`, plus the last hour's throughput."""

    model_config = ConfigDict(extra="allow")

    total: int
    by_status: dict[str, int]
    by_origin: dict[str, int]
    by_source: dict[str, int]
    due_now: int
    oldest_due_at: str | None
    claims_last_minute: int
    hosts: dict[str, Any]
    recent_errors: list[dict[str, Any]]
    throughput_last_hour: list[dict[str, Any]] = Field(
        description="One bucket per minute: pages_ok, pages_error, pages_other, polls."
    )
    top_error_hosts: list[dict[str, Any]]
