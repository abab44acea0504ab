"""Pydantic models of the API's request and response bodies (they make /openapi.json)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from frontier.states import IngestionMode


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


class SourceOut(BaseModel):
    """A stored source: its `sources` row and the options it sets in the poller's and the
    spider's rows. (What may be sent is `SourceConfig` / `SourcePatch`, in
    frontier/source_schema.py.)"""

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
    adaptive_interval: bool
    spider_interval_minutes: int
    spider_allow_external: bool
    spider_listing_urls: list[str]
    kind: str
    config: dict[str, Any]
    revisit: list[int] | None = Field(
        default=None, description="Seconds between revisits of each article; null: none."
    )
    politeness_key: str | None = Field(
        default=None, description="host, domain or ip; null: FRONTIER_POLITENESS_KEY."
    )
    languages: list[str] | None = Field(
        default=None, description="The languages its articles are kept in; null: any."
    )
    render: str = Field(
        default="never",
        description="never, auto (render in a browser a page that is a client-side app's"
        " empty shell), always.",
    )
    access: dict[str, Any] | None = Field(
        default=None,
        description="Its credentials, headers and cookies as stored: references to where"
        " the secrets are read (*_env, *_file, {env}, {file}), never their values.",
    )
    proxy: dict[str, Any] | None = Field(
        default=None,
        description="Its proxy as stored: the URL, the user name and where the password is"
        " read (password_env, password_file), never the password.",
    )
    created_at: datetime
    updated_at: datetime
    last_error: str | None = Field(
        default=None, description="The poller's last error on this source, if any."
    )


class ImportErrorLine(BaseModel):
    line: int = Field(description="1-based line (or position in the JSON `urls` array).")
    reason: str


class ImportResult(BaseModel):
    accepted: int = Field(description="New URLs added to the frontier.")
    duplicate: int = Field(description="Lines whose URL was known already or repeated.")
    rejected: int = Field(description="Lines that are not usable URLs.")
    requeued: int | None = Field(
        default=None,
        description="With requeue=true only: known failed or dead URLs made pending again.",
    )
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
    revisits: dict[str, Any] = Field(
        description="Articles due again on their source's revisit schedule: waiting, "
        "due_now, and the revisits' fetch outcomes so far (ok: changed and stored again; "
        "not_modified: a 304 or the same text)."
    )
    page_outcomes: dict[str, int] = Field(
        description="First fetches (and their retries) by fetch-log outcome so far."
    )
    throughput_last_hour: list[dict[str, Any]] = Field(
        description="One bucket per minute: pages_ok, pages_error, pages_other, polls."
    )
    top_error_hosts: list[dict[str, Any]]
