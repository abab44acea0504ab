"""The Elasticsearch content sink (and, with opensearch-py's client, the OpenSearch one:
frontier.sinks.opensearch): the clients of frontier.sinks.search_clients and their bulk
helpers. The client follows the server: its version is asked first (`GET /`), and
Elasticsearch 8 and 9 are each sent the REST compatibility of their own major.

- The index is created with the explicit settings and mappings the schema generates for
  the server (frontier.sinks.schema.index_definition; raw_content.json, package data beside
  this module that deploy/compose.yaml mounts, holds the same) when it does not exist
  (`ensure_index`); an index that exists gets the fields added to the mapping since it was
  made (`paywalled`, migration 0031's twin; the detected language and the article metadata,
  0036's), none of its fields changed.
- Document id = `url_hash`, op `index`, so writing a URL again replaces its document.
- Writes are buffered and sent as one bulk request when `flush_docs` documents are waiting
  or `flush_interval_s` has passed since the first of them, whichever comes first; each
  `write()` returns once its own documents are stored (or raises).
- Transport errors and 429/5xx answers are retried with exponential backoff (`attempts`);
  per-document 429s are retried by the bulk helper. What still fails raises
  `SinkUnavailable`; documents Elasticsearch refuses (e.g. a mapping conflict) raise
  `DocumentRejected` naming them.
- `ElasticsearchDocuments` reads the index back: a `bool` query (`term`/`range` filters, a
  `multi_match` over title and body with operator `and` for a search), sorted by
  `fetched_at` then `url_hash`, both descending, paged with `search_after`.
- The client's own retry and node warnings (each with a traceback) say again what
  `SinkUnavailable` reports once: they are logged at DEBUG (`frontier -v` shows them).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from frontier.documents import (
    EPOCH,
    UNLISTED_FIELDS,
    BadDocumentQuery,
    Cursor,
    DocumentFilter,
    DocumentPage,
    ExportQuery,
    json_ready,
    page_of,
)
from frontier.export import PAGE_ROWS, native_row
from frontier.sinks import DocumentRejected, RawDocument, SinkUnavailable
from frontier.sinks.schema import HEAVY_FIELDS, index_definition
from frontier.sinks.search_clients import (
    ElasticClient,
    SearchClient,
    SearchError,
    UnsupportedServer,
)

log = logging.getLogger(__name__)

# Loggers of the client whose warnings `SinkUnavailable` already reports.
CLIENT_LOGGERS = (
    "elastic_transport.transport",
    "elastic_transport.node_pool",
    "elastic_transport.node",
    "elasticsearch",
    "elasticsearch.helpers",
)


def _client_warning_at_debug(record: logging.LogRecord) -> bool:
    """A logger filter: the client's warnings become DEBUG records, kept only when that
    logger logs at DEBUG; its errors pass unchanged."""
    if record.levelno > logging.WARNING:
        return True
    record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
    return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def client_warnings_at_debug() -> None:
    """Install the filter on the client's loggers (idempotent)."""
    for name in CLIENT_LOGGERS:
        logging.getLogger(name).addFilter(_client_warning_at_debug)


# The index definition is package data; deploy/compose.yaml mounts this same file.
MAPPINGS_RESOURCE = "raw_content.json"


def load_index_definition() -> dict[str, Any]:
    text = resources.files(__package__).joinpath(MAPPINGS_RESOURCE).read_text(encoding="utf-8")
    definition: dict[str, Any] = json.loads(text)
    return definition


class ElasticsearchSink:
    """The index sink over a `SearchClient`: Elasticsearch 8 or 9 by default, OpenSearch
    with an `OpenSearchClient` (`OpenSearchSink`)."""

    name = "elasticsearch"
    url_setting = "FRONTIER_ELASTICSEARCH_URL"

    def __init__(
        self,
        url: str,
        *,
        index: str = "raw_content",
        flush_docs: int = 500,
        flush_interval_s: float = 0.2,
        attempts: int = 5,
        backoff_s: float = 0.5,
        definition: dict[str, Any] | None = None,
        client: SearchClient | None = None,
    ) -> None:
        client_warnings_at_debug()
        self.index = index
        # Where errors say the documents were going (no credentials: describe_url).
        self._server = describe_url(url)
        self._client = client or self._client_for(url)
        self._where = f"{self._client.product} at {self._server} ({self.url_setting})"
        self._flush_docs = flush_docs
        self._interval = flush_interval_s
        self._attempts = attempts
        self._backoff = backoff_s
        self._definition = definition
        self._waiting: list[tuple[Sequence[RawDocument], asyncio.Future[None]]] = []
        self._waiting_docs = 0
        self._timer: asyncio.TimerHandle | None = None
        self._flushes: set[asyncio.Task[None]] = set()

    def _client_for(self, url: str) -> SearchClient:
        return ElasticClient(url)

    async def ensure_index(self) -> None:
        """Ask the server its version (UnsupportedServer: not one this sink speaks to), then
        create the index with the schema's mappings for that server if absent, else add the
        fields it lacks."""
        try:
            server = await self._client.server()
            definition = self._definition or index_definition(server.distribution, server.major)
            if await self._client.index_exists(self.index):
                # An index an older release made lacks the fields added since (the
                # mapping is strict): add them. Adding fields changes no existing one.
                await self._client.add_fields(self.index, definition["mappings"]["properties"])
                return
            await self._client.create_index(self.index, definition)
        except UnsupportedServer as exc:
            raise UnsupportedServer(f"{self._where}: {exc}") from None
        except SearchError as exc:
            if exc.status == 400 and "resource_already_exists" in str(exc):
                return
            if exc.status == 400:
                raise SinkUnavailable(
                    f"cannot create index {self.index} in {self._where}: {exc}"
                ) from None
            raise SinkUnavailable(f"{self._where}: {exc}") from None

    async def write(self, documents: Sequence[RawDocument]) -> None:
        if not documents:
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((documents, done))
        self._waiting_docs += len(documents)
        if self._waiting_docs >= self._flush_docs or self._interval <= 0:
            self._start_flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._interval, self._start_flush)
        await done

    def _start_flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._waiting, self._waiting_docs = self._waiting, [], 0
        if batch:
            task = asyncio.get_running_loop().create_task(self._flush(batch))
            self._flushes.add(task)
            task.add_done_callback(self._flushes.discard)

    async def _flush(self, batch: list[tuple[Sequence[RawDocument], asyncio.Future[None]]]) -> None:
        documents = {doc.url_hash: doc for docs, _ in batch for doc in docs}
        try:
            failed = await self._send(list(documents.values()))
        except SinkUnavailable as exc:
            for _, done in batch:
                if not done.done():
                    done.set_exception(SinkUnavailable(str(exc)))
            return
        for docs, done in batch:
            if done.done():
                continue
            mine = [doc.url_hash for doc in docs if doc.url_hash in failed]
            if mine:
                reasons = "; ".join(sorted({failed[h] for h in mine}))[:500]
                done.set_exception(
                    DocumentRejected(f"{self._client.product} refused: {reasons}", mine, failed)
                )
            else:
                done.set_result(None)

    async def _send(self, documents: list[RawDocument]) -> dict[str, str]:
        """Bulk-index documents; returns url_hash -> reason for those refused for good."""
        actions = [
            {
                "_op_type": "index",
                "_index": self.index,
                "_id": doc.url_hash,
                "_source": doc.as_json(),
            }
            for doc in documents
        ]
        delay = self._backoff
        for attempt in range(1, self._attempts + 1):
            try:
                errors = await self._client.bulk(
                    actions,
                    chunk_size=max(len(actions), 1),
                    raise_on_error=False,
                    raise_on_exception=True,
                    max_retries=3,
                    initial_backoff=self._backoff,
                    max_backoff=10,
                )
            except SearchError as exc:
                status = exc.status
                permanent = status is not None and 400 <= status < 500 and status != 429
                if permanent or attempt == self._attempts:
                    raise SinkUnavailable(f"bulk write to {self._where} failed: {exc}") from None
                log.warning("%s bulk attempt %d failed (%s); retrying", self._where, attempt, exc)
                await asyncio.sleep(delay)
                delay *= 2
                continue
            return _refusals(errors)
        raise AssertionError("unreachable")

    async def delete(self, url_hashes: Sequence[str]) -> None:
        """Delete by id, after the writes waiting (a document written and then removed
        in one batch stays removed); an id already absent is no error."""
        if not url_hashes:
            return
        if self._waiting:
            self._start_flush()
        if self._flushes:
            await asyncio.gather(*self._flushes, return_exceptions=True)
        actions = [
            {"_op_type": "delete", "_index": self.index, "_id": url_hash}
            for url_hash in sorted(set(url_hashes))
        ]
        try:
            errors = await self._client.bulk(actions, raise_on_error=False, raise_on_exception=True)
        except SearchError as exc:
            raise SinkUnavailable(f"bulk delete in {self._where} failed: {exc}") from None
        failed = {
            key: reason
            for key, reason in _refusals(errors).items()
            if not reason.startswith("HTTP 404")
        }
        if failed:
            raise SinkUnavailable(f"bulk delete in {self._where} failed: {failed}")

    async def get(self, url_hash: str) -> dict[str, Any] | None:
        return await get_document(self._client, self.index, url_hash)

    async def health(self) -> str:
        """The server's version and the index, or SinkUnavailable."""
        try:
            server = await self._client.server()
            await self._client.index_exists(self.index)  # the server answers now
        except SearchError as exc:
            raise SinkUnavailable(f"{self._where}: {exc}") from None
        return f"{server} at {self._server}, index {self.index}"

    async def close(self) -> None:
        if self._waiting:
            self._start_flush()
        if self._flushes:
            await asyncio.gather(*self._flushes, return_exceptions=True)
        await self._client.close()


def _refusals(errors: Any) -> dict[str, str]:
    refused: dict[str, str] = {}
    for item in errors if isinstance(errors, list) else []:
        result: dict[str, Any] = next(iter(item.values()), {}) if isinstance(item, dict) else {}
        error = result.get("error")
        reason = error.get("reason", str(error)) if isinstance(error, dict) else str(error)
        refused[str(result.get("_id"))] = f"HTTP {result.get('status')}: {reason}"
    return refused


SORT = [{"fetched_at": "desc"}, {"url_hash": "desc"}]


def search_body(where: DocumentFilter, after: Cursor | None, limit: int) -> dict[str, Any]:
    """The `_search` request body of one page (size: one more than wanted, to learn whether
    a next page exists)."""
    filters: list[dict[str, Any]] = []
    if where.source_id is not None:
        filters.append({"term": {"source_id": str(where.source_id)}})
    if where.host is not None:
        filters.append({"term": {"host": where.host}})
    if where.since is not None:
        filters.append({"range": {"fetched_at": {"gte": where.since.isoformat()}}})
    must: list[dict[str, Any]] = []
    if where.search:
        must.append(
            {"multi_match": {"query": where.search, "fields": ["title", "body"], "operator": "and"}}
        )
    query: dict[str, Any] = {"filter": filters, "must": must}
    if where.one_per_cluster:  # the earliest of each cluster names no other
        query["must_not"] = [{"exists": {"field": "near_duplicate_of"}}]
    body: dict[str, Any] = {
        "query": {"bool": query},
        "sort": SORT,
        "size": limit + 1,
        "_source": {"excludes": list(UNLISTED_FIELDS)},
        "track_total_hits": False,
    }
    if after is not None:
        # The index maps fetched_at as `date`: its sort value is epoch milliseconds.
        millis = (after.fetched_at - EPOCH) // timedelta(milliseconds=1)
        body["search_after"] = [millis, after.url_hash]
    return body


EXPORT_SORT = [{"fetched_at": "asc"}, {"url_hash": "asc"}]


def export_body(query: ExportQuery, after: list[Any] | None, size: int) -> dict[str, Any]:
    """The `_search` request body of one page of an export: oldest first, up to the
    export's start, `search_after` the last page's sort values. A language matches the
    detected one, else the declared one or its region (`en`: `en`, `en-GB`; as declared,
    case included: the index keeps keywords as they come)."""
    where = query.where
    filters: list[dict[str, Any]] = []
    if where.source_id is not None:
        filters.append({"term": {"source_id": str(where.source_id)}})
    if where.host is not None:
        filters.append({"term": {"host": where.host}})
    span = {"lte": query.until.isoformat()}
    if where.since is not None:
        span["gte"] = where.since.isoformat()
    filters.append({"range": {"fetched_at": span}})
    if query.language is not None:
        declared = [
            {"term": {"language": query.language}},
            {"prefix": {"language": f"{query.language}-"}},
        ]
        undetected = {
            "must_not": [{"exists": {"field": "detected_language"}}],
            "should": declared,
            "minimum_should_match": 1,
        }
        either = [{"term": {"detected_language": query.language}}, {"bool": undetected}]
        filters.append({"bool": {"should": either, "minimum_should_match": 1}})
    clauses: dict[str, Any] = {"filter": filters}
    if where.one_per_cluster:
        clauses["must_not"] = [{"exists": {"field": "near_duplicate_of"}}]
    body: dict[str, Any] = {
        "query": {"bool": clauses},
        "sort": EXPORT_SORT,
        "size": size,
        "track_total_hits": False,
    }
    if not query.with_body:
        body["_source"] = {"excludes": list(HEAVY_FIELDS)}
    if after is not None:
        body["search_after"] = after
    return body


class ElasticsearchDocuments:
    """Reads the `raw_content` index (of Elasticsearch, or OpenSearch with its client)."""

    name = "elasticsearch"

    def __init__(
        self, url: str, *, index: str = "raw_content", client: SearchClient | None = None
    ) -> None:
        client_warnings_at_debug()
        self.index = index
        self._client = client or ElasticClient(url)
        self.name = self._client.product.lower()  # elasticsearch, opensearch

    async def page(
        self, where: DocumentFilter, *, after: Cursor | None, limit: int
    ) -> DocumentPage:
        body = search_body(where, after, limit)
        try:
            answer = await self._client.search(self.index, body)
        except SearchError as exc:
            if exc.status == 404:
                return DocumentPage([], None)  # no index yet: nothing was stored
            raise SinkUnavailable(f"{self._client.product} search failed: {exc}") from None
        rows = [hit["_source"] for hit in answer["hits"]["hits"]]
        return page_of(rows, limit, _cursor_of)

    async def get(self, url_hash: str) -> dict[str, Any] | None:
        return await get_document(self._client, self.index, url_hash)

    async def export(
        self, query: ExportQuery, *, page_rows: int = PAGE_ROWS
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """The documents matching `query`, oldest first, a page at a time (`export_body`,
        `search_after` on the sort values of the page before)."""
        if query.where.search:
            raise BadDocumentQuery("search: an export takes no search words")
        after: list[Any] | None = None
        while True:
            try:
                answer = await self._client.search(self.index, export_body(query, after, page_rows))
            except SearchError as exc:
                if exc.status == 404:
                    return  # no index yet: nothing was stored
                raise SinkUnavailable(f"{self._client.product} export failed: {exc}") from None
            hits = answer["hits"]["hits"]
            if hits:
                yield [native_row(hit["_source"], query.fields) for hit in hits]
            if len(hits) < page_rows:
                return
            after = hits[-1]["sort"]

    async def close(self) -> None:
        await self._client.close()


async def get_document(client: SearchClient, index: str, url_hash: str) -> dict[str, Any] | None:
    """One stored document, body included (the sink's and the reader's `get`)."""
    try:
        source = await client.get(index, url_hash)
    except SearchError as exc:
        raise SinkUnavailable(f"{client.product} get failed: {exc}") from None
    return json_ready(source) if source is not None else None


def _cursor_of(document: dict[str, Any]) -> Cursor:
    return Cursor(datetime.fromisoformat(document["fetched_at"]), document["url_hash"])


def describe_url(url: str) -> str:
    """scheme://host:port of an Elasticsearch URL, without credentials, for messages."""
    try:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(unparseable URL)"
    return f"{parts.scheme}://{parts.hostname or ''}{port}"
