"""Reading the stored articles back, whichever sink holds them: the filters, the keyset
cursor and the reader protocol that `frontier documents`, `GET /api/v1/documents` and the
dashboard's article pages share. Each sink has its reader beside its writer
(`frontier.sinks.postgres.PostgresDocuments`, `frontier.sinks.elasticsearch.
ElasticsearchDocuments`); `frontier.sinks.configured.open_reader` opens the configured one.

Order is newest first: `fetched_at` descending, then `url_hash` descending, so a page's
cursor is the last document's `(fetched_at, url_hash)` and the next page starts strictly
below it. A cursor is opaque to its users: `<microseconds since the epoch>.<url_hash>`.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from uuid import UUID

from frontier.db import Database
from frontier.durations import seconds_of
from frontier.errors import FrontierError
from frontier.sinks import DOCUMENT_FIELDS
from frontier.sinks.schema import FIELD_NAMES, HEAVY_FIELDS
from frontier.sources import SourceRepository, UnknownSource
from frontier.urls import InvalidURL, host_key

# What a list of documents leaves out of each (a page of 100 bodies could weigh MBs).
UNLISTED_FIELDS = (
    "body",
    "summary",
    "image_url",
    "content_hash",
    "warc_file",
    "warc_offset",
    "warc_length",
    "warc_record_id",
    "paragraphs",
    "markdown",
    "minhash",
)
LISTED_FIELDS = tuple(name for name in DOCUMENT_FIELDS if name not in UNLISTED_FIELDS)
SEARCH_MAX_CHARS = 200
_CURSOR = re.compile(r"^(-?\d{1,19})\.([0-9a-f]{64})$")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class BadDocumentQuery(FrontierError, ValueError):
    """A documents filter or page cursor that cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class Cursor:
    fetched_at: datetime
    url_hash: str

    def encode(self) -> str:
        micros = (self.fetched_at - EPOCH) // timedelta(microseconds=1)
        return f"{micros}.{self.url_hash}"

    @classmethod
    def decode(cls, text: str) -> Cursor:
        match = _CURSOR.match(text)
        if match is None:
            raise BadDocumentQuery(
                f"after: not a cursor {text[:80]!r}: pass the `next` of a previous page"
            )
        try:
            moment = EPOCH + timedelta(microseconds=int(match[1]))
        except OverflowError:
            raise BadDocumentQuery(f"after: cursor {text[:80]!r} is out of range") from None
        return cls(moment, match[2])


def parse_since(text: str, *, now: datetime) -> datetime:
    """`--since`: an ISO 8601 date or date-time (UTC when it names no zone), or an age such
    as `30m`, `6h`, `2d`, `1w` counted back from `now`."""
    value = text.strip()
    ago = seconds_of(value)
    if ago is not None:
        return now - timedelta(seconds=ago)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise BadDocumentQuery(
            f"since: {text[:80]!r} is neither an ISO 8601 date or time "
            f"(2026-11-24, 2026-11-24T08:00:00+01:00) nor an age (30m, 6h, 2d, 1w)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def check_search(words: str) -> str:
    """The search words, or BadDocumentQuery when they are empty or too long."""
    value = words.strip()
    if not value:
        raise BadDocumentQuery("search: give at least one word")
    if len(value) > SEARCH_MAX_CHARS:
        raise BadDocumentQuery(f"search: at most {SEARCH_MAX_CHARS} characters")
    return value


@dataclass(frozen=True, slots=True)
class DocumentFilter:
    """Every field optional; all given ones must hold. `search`: words, all of which must
    appear in the title or the body. `one_per_cluster`: of each near-duplicate cluster
    only its earliest document, the one the others name in `near_duplicate_of`
    (docs/duplicates.md, "Near-duplicates")."""

    source_id: UUID | None = None
    host: str | None = None
    since: datetime | None = None
    search: str | None = None
    one_per_cluster: bool = False


@dataclass(frozen=True, slots=True)
class DocumentPage:
    items: list[dict[str, Any]]  # LISTED_FIELDS of each, JSON-ready
    next: str | None  # the cursor of the next page; None on the last


def export_fields(with_body: bool) -> tuple[str, ...]:
    """The fields an export holds, in the schema's order."""
    return FIELD_NAMES if with_body else tuple(n for n in FIELD_NAMES if n not in HEAVY_FIELDS)


@dataclass(frozen=True, slots=True)
class ExportQuery:
    """What to export: the documents filter (its search words unused), a language, the
    article's text or not, and the newest fetched_at (the export's start)."""

    where: DocumentFilter
    until: datetime
    language: str | None = None
    with_body: bool = False

    @property
    def fields(self) -> tuple[str, ...]:
        return export_fields(self.with_body)


class DocumentReader(Protocol):
    """Reads one sink's documents."""

    name: str

    async def page(
        self, where: DocumentFilter, *, after: Cursor | None, limit: int
    ) -> DocumentPage: ...

    async def get(self, url_hash: str) -> dict[str, Any] | None:
        """Every field of one document (JSON-ready), or None."""
        ...

    def export(
        self, query: ExportQuery, *, page_rows: int = ...
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """Every document `query` matches, oldest first, a page of rows at a time (the
        query's fields; dates as datetimes): frontier.export writes them."""
        ...

    async def close(self) -> None: ...


async def build_filter(
    db: Database,
    *,
    source: str | None = None,
    host: str | None = None,
    since: str | None = None,
    search: str | None = None,
    distinct: str | None = None,
    now: datetime,
) -> DocumentFilter:
    """The filter the CLI's options or the API's query parameters name: a source by name
    or id, a host or URL, a date or age, search words, `distinct` "cluster" (one document
    per near-duplicate cluster). BadDocumentQuery says what is wrong."""
    if distinct not in (None, "cluster"):
        raise BadDocumentQuery(
            f"distinct: {distinct[:40]!r} is not known: the only one is 'cluster' "
            "(one document per near-duplicate cluster)"
        )
    source_id = None
    if source is not None:
        try:
            source_id = await SourceRepository(db).id_of(source)
        except UnknownSource:
            raise BadDocumentQuery(f"source: no source named {source[:200]!r}") from None
    host_name = None
    if host is not None:
        try:
            host_name = host_key(host)
        except InvalidURL as exc:
            raise BadDocumentQuery(f"host: {exc.reason}") from None
    return DocumentFilter(
        source_id=source_id,
        host=host_name,
        since=parse_since(since, now=now) if since is not None else None,
        search=check_search(search) if search is not None else None,
        one_per_cluster=distinct == "cluster",
    )


def json_ready(document: dict[str, Any]) -> dict[str, Any]:
    """Dates as ISO text, ids as strings: the same shape from either sink."""
    out = dict(document)
    for name in ("published_at", "fetched_at"):
        if isinstance(out.get(name), datetime):
            out[name] = out[name].isoformat()
    if out.get("source_id") is not None:
        out["source_id"] = str(out["source_id"])
    return out


def page_of(rows: list[dict[str, Any]], limit: int, cursor_of: Any) -> DocumentPage:
    """A page from up to `limit + 1` rows (the extra row only says a next page exists)."""
    items = rows[:limit]
    more = len(rows) > limit
    return DocumentPage(
        [json_ready({name: row.get(name) for name in LISTED_FIELDS}) for row in items],
        cursor_of(items[-1]).encode() if more and items else None,
    )
