"""Content sinks: where fetched documents go. A sink is a plugin: an object registered in
the entry-point group `frontier.sinks` (`frontier.sinks.installed`) that opens a `Sink`,
the interface below. frontier's own are registered the same way (pyproject.toml):

- `postgres`: `frontier.sinks.postgres.PostgresSink`, the `raw_content` table (the default);
- `elasticsearch`: `frontier.sinks.elasticsearch.ElasticsearchSink`, the index
  `raw_content`, created with the settings and mappings of `frontier/sinks/raw_content.json`
  (package data) when absent (the default when FRONTIER_ELASTICSEARCH_URL is set).

`FRONTIER_SINK` names the one the fetcher writes to, `FRONTIER_SINK_OPTIONS` (a JSON object)
configures a plugin's; `frontier.sinks.configured.open_sink(settings, db)` opens it.
docs/sinks.md describes the interface and how to write one.

The contract of a `Sink` (every built-in keeps it, tests/integration/test_sinks.py):

- idempotent: the document id is the URL's `url_hash`, and writing a URL again replaces its
  document;
- `write()` returns once every document of the batch is stored; when the sink refused some
  for good it raises `DocumentRejected` naming them (`url_hashes`, and `reasons` by
  url_hash), and every other document of the batch is stored; when it cannot take documents
  now it raises `SinkUnavailable`, and none of the batch counts as stored (the fetcher
  puts the URLs back to pending with backoff, and writes them again later);
- `delete()` returns once the documents are gone (a duplicate's document, when another URL
  holds the article); absent ones are no error;
- `get()` returns the stored document of a URL (None: none, or a sink that cannot read
  back: the fetcher then treats a changed text as new);
- `health()` says what the sink is writing to when it can take documents, and raises
  `SinkUnavailable` saying why when it cannot;
- `close()` releases what the sink opened (not what it was given, such as the database).

Errors:

    SinkError (FrontierError)
    ├── SinkUnavailable   retryable: the sink cannot be reached or is overloaded; the
    │                     fetcher puts the URLs back to pending with backoff
    └── DocumentRejected  permanent: the sink refused these documents (mapping conflict...);
                          `url_hashes` says which, `reasons` why
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

from frontier.errors import FrontierError
from frontier.sinks.schema import DATE_FIELDS, FIELD_NAMES

# The fields of a document, in order: declared once, in frontier.sinks.schema.
DOCUMENT_FIELDS = FIELD_NAMES


class SinkError(FrontierError):
    """Root of the content sinks' errors."""


class SinkUnavailable(SinkError):
    """Retryable: the sink cannot take documents now."""


class DocumentRejected(SinkError):
    """Permanent: the sink refused some documents."""

    def __init__(
        self, message: str, url_hashes: Sequence[str], reasons: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.url_hashes = tuple(url_hashes)
        # why each was refused (url_hash -> reason); the message when the sink says no more
        self.reasons = {h: (reasons or {}).get(h, message) for h in self.url_hashes}


@dataclass(frozen=True, slots=True)
class RawDocument:
    """One document of `raw_content` (the contract's field list in docs/architecture.md, in
    order, then the pointer of its response in the WARC archive)."""

    url_hash: str
    url: str
    final_url: str | None
    source_id: UUID | None
    source_name: str | None
    host: str
    origin: str
    title: str | None
    body: str | None
    summary: str | None
    author: str | None
    published_at: datetime | None
    image_url: str | None
    language: str | None
    content_hash: str | None
    word_count: int
    extractor: str | None
    http_status: int | None
    fetched_at: datetime
    # the page declares its article not free and this is its teaser (fetcher/extract.py)
    paywalled: bool = False
    warc_file: str | None = None  # the complete file's name, in the archive directory
    warc_offset: int | None = None  # the response record's gzip member: offset, length
    warc_length: int | None = None
    warc_record_id: str | None = None
    # the language the body is written in (fetcher.language) and the model's probability
    detected_language: str | None = None
    language_confidence: float | None = None
    modified_at: datetime | None = None  # as the page declares it
    section: str | None = None
    tags: tuple[str, ...] = ()  # tags and keywords, as the page declares them
    paragraphs: tuple[str, ...] = ()  # the body, a paragraph each
    markdown: str | None = None  # the body as Markdown, when it has headings or lists
    # the body's MinHash, hex (frontier.near_duplicates); None: no body
    minhash: str | None = None
    # the url_hash of the earliest document this one is a near-duplicate of
    near_duplicate_of: str | None = None

    def as_json(self) -> dict[str, Any]:
        """JSON-ready fields (ISO dates, string ids). The fields are read as they are, not
        through `dataclasses.asdict`, whose deep copy of every value cost more than the
        JSON encoding itself (the outbox encodes each document fetched)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["tags"], values["paragraphs"] = list(self.tags), list(self.paragraphs)
        for name in DATE_FIELDS:
            if values[name] is not None:
                values[name] = values[name].isoformat()
        if values["source_id"] is not None:
            values["source_id"] = str(values["source_id"])
        return values


class Sink(Protocol):
    """Where documents go: the interface a sink plugin implements (the contract above)."""

    name: str  # the sink's name in the entry-point group, used in logs

    async def write(self, documents: Sequence[RawDocument]) -> None:
        """Store these documents (idempotent by url_hash); durable on return. Raises
        DocumentRejected naming those refused for good (the others are stored), or
        SinkUnavailable when none can be stored now."""
        ...

    async def delete(self, url_hashes: Sequence[str]) -> None:
        """Remove these documents (absent ones are no error); durable on return."""
        ...

    async def get(self, url_hash: str) -> dict[str, Any] | None:
        """The document stored for this URL (None: none, or the sink does not read back)."""
        ...

    async def health(self) -> str:
        """What the sink writes to, when it can take documents now; SinkUnavailable, saying
        why, when it cannot."""
        ...

    async def close(self) -> None: ...
