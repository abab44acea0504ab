"""`frontier reextract` (issue 30 item 3): extraction run again over the archived responses
of stored documents, with no network request at all.

Each document of the selection (`--source`, `--host`, `--since` or all) names its response
record in the WARC archive (frontier.archive, `warc_file`/`warc_offset`/`warc_length`); the
record is read back and goes through `ResponseSteps` (fetcher.response_steps), the very steps a
fetched response takes: the decision and the verdicts, the extraction on the extraction
pool, the canonical and content keys, the duplicates and the sink write. So a rule changed
there (a source's selectors, a better extractor, a verdict) reaches the documents already
stored.

A document is rewritten only when its result changed (its content hash or any extracted
field); its response stays the one archived (`fetched_at` and the archive pointer are
kept). A changed text keeps the earlier version (frontier.versions), and the URL's row
learns the new content hash, so that the next revisit compares with it. A document whose
new text another URL holds goes, and its URL is linked to the holder, as on a revisit.
A response that now ends without a document is counted (`failed`, by outcome): a failed
extraction leaves the stored document as it is; a verdict goes through the store step as
a revisit's does (a page that now says noindex loses its document; the URL's row is left
as it is).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from multidict import CIMultiDict, CIMultiDictProxy

from fetcher.config import FetcherConfig, archive_location
from fetcher.page import Page
from fetcher.response_steps import ResponseSteps
from fetcher.service import extraction_for
from fetcher.sink_backoff import SinkBackoff
from fetcher.source_cache import UNKNOWN, SourceCache
from frontier.archive.files import Location
from frontier.archive.reader import RecordUnreadable, StoredRecord, read_record
from frontier.archive.records import RENDERED_TYPE
from frontier.db import Database
from frontier.documents import Cursor, DocumentFilter, DocumentReader
from frontier.queue import QueueRepository
from frontier.queue_values import OutcomeKind, QueuePolicy, Relink
from frontier.settings import Settings
from frontier.sinks import RawDocument
from frontier.sinks.configured import open_reader, open_sink
from frontier.sinks.duplicates import DuplicateContent
from frontier.sinks.near_duplicates import NearDuplicates
from frontier.sources import SourceRepository
from frontier.versions import DocumentVersions

log = logging.getLogger(__name__)

BATCH = 64  # documents read, extracted and stored together
IN_FLIGHT = 3  # batches at once
# What a re-extraction compares (and rewrites): the fields the extraction decides.
COMPARED = (
    "title",
    "body",
    "summary",
    "author",
    "published_at",
    "image_url",
    "language",
    "content_hash",
    "word_count",
    "extractor",
    "paywalled",
    "detected_language",
    "modified_at",
    "section",
    "tags",
    "markdown",
    # a fingerprint made by an earlier MinHash (release) compares with no new one: the
    # document is rewritten with today's, and recorded for the near-duplicate lookup
    "minhash",
)


@dataclass(slots=True)
class ReextractSummary:
    """What a run did (`--json` prints it)."""

    examined: int = 0  # documents of the selection
    changed: int = 0  # rewritten (or, with --dry-run, that would be)
    unchanged: int = 0
    duplicates: int = 0  # their new text is another URL's document: theirs went
    not_archived: int = 0  # no archive pointer (stored with archiving off)
    unreadable: int = 0  # the record is gone (retention) or torn
    not_fetched: int = 0  # the URL is not `fetched` now (being fetched, requeued)
    failed: int = 0  # ended without a document (a verdict, a failed extraction), or refused
    outcomes: Counter[str] = field(default_factory=Counter)  # of those failed, by kind
    dry_run: bool = False

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "outcomes": dict(self.outcomes)}


class Reextractor:
    def __init__(
        self,
        *,
        steps: ResponseSteps,
        documents: DocumentReader,
        sources: SourceCache,
        queue: QueueRepository,
        archive_dir: Path,
        dry_run: bool = False,
    ) -> None:
        self.steps = steps
        self.documents = documents
        self.sources = sources
        self.queue = queue
        self.archive_dir = archive_dir
        self.dry_run = dry_run

    async def run(
        self,
        where: DocumentFilter,
        *,
        now: datetime | None = None,
        progress: Callable[[ReextractSummary], None] | None = None,
    ) -> ReextractSummary:
        summary = ReextractSummary(dry_run=self.dry_run)
        running: set[asyncio.Task[None]] = set()

        async def one(url_hashes: list[str]) -> None:
            stored = await asyncio.gather(*(self.steps.sink.get(h) for h in url_hashes))
            await self._batch([d for d in stored if d is not None], summary, now)
            if progress is not None:
                progress(summary)

        try:
            async for url_hashes in self._selection(where):
                # A few batches at once: one's reads and writes wait on the database and
                # the disk while another's pages are on the extraction pool.
                if len(running) >= IN_FLIGHT:
                    done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                    for task in done:
                        task.result()
                running.add(asyncio.create_task(one(url_hashes)))
            for finished in asyncio.as_completed(running):
                await finished
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
        return summary

    async def _selection(self, where: DocumentFilter) -> AsyncIterator[list[str]]:
        """The url_hashes of the selection, a batch at a time (the reader's keyset pages:
        newest first, each document once even while documents are rewritten, since a
        rewrite keeps its fetched_at)."""
        after: Cursor | None = None
        while True:
            page = await self.documents.page(where, after=after, limit=BATCH)
            if page.items:
                yield [item["url_hash"] for item in page.items]
            if page.next is None:
                return
            after = Cursor.decode(page.next)

    async def _batch(
        self, stored: list[dict[str, Any]], summary: ReextractSummary, now: datetime | None
    ) -> None:
        summary.examined += len(stored)
        archived = [d for d in stored if d.get("warc_file")]
        summary.not_archived += len(stored) - len(archived)
        claims = {
            c.url_hash: c
            for c in await self.queue.stored_claims([(d["url_hash"], d["host"]) for d in archived])
        }
        summary.not_fetched += sum(1 for d in archived if d["url_hash"] not in claims)
        todo = [d for d in archived if d["url_hash"] in claims]
        records = await asyncio.to_thread(self._read, todo)
        infos = await self.sources.get_many(claims[d["url_hash"]].source_id for d in todo)
        pages: list[tuple[Page, dict[str, Any], StoredRecord]] = []
        for doc, record in zip(todo, records, strict=True):
            if record is None:
                summary.unreadable += 1
                continue
            claim = claims[doc["url_hash"]]
            source = infos.get(claim.source_id, UNKNOWN) if claim.source_id else UNKNOWN
            # A revisit of the stored text: the store step compares with it, keeps it as
            # the earlier version when the text changed, and drops it when another URL
            # holds the new text.
            claim = replace(
                claim, content_hash=doc["content_hash"], revisit_step=max(claim.revisit_step, 1)
            )
            page = Page(claim, source)
            answered = record.headers.get("WARC-Target-URI")
            if answered and answered != claim.request_url:
                page.fetch_url = answered
            pages.append((page, doc, record))
        await asyncio.gather(
            *(
                self.steps.on_response(page, _status(r), _headers(r), r.payload, now)
                for page, _, r in pages
            )
        )
        changed, judged = [], []
        for page, doc, _ in pages:
            if page.document is None or _kind(page) is not OutcomeKind.FETCHED:
                summary.failed += 1
                summary.outcomes[str(_kind(page))] += 1
                if _kind(page) is not OutcomeKind.FAILED:
                    judged.append(page)  # a verdict: the store step applies it
            elif _same(page.document, doc):
                summary.unchanged += 1
            else:
                page.document = _same_response(page.document, doc)
                if page.document.content_hash == doc["content_hash"]:
                    # the same text, other fields: rewritten, no version to keep
                    page.claim = replace(page.claim, content_hash=None)
                changed.append(page)
        if self.dry_run:
            summary.changed += len(changed)
            return
        if judged:  # a revisit's rules: a page that now says noindex loses its document
            await self.steps.store(judged)
        await self._store(changed, summary)

    async def _store(self, pages: list[Page], summary: ReextractSummary) -> None:
        if not pages:
            return
        await self.steps.store(pages)
        written = [p for p in pages if _kind(p) is OutcomeKind.FETCHED]
        gone = [p for p in pages if _kind(p) is OutcomeKind.DUPLICATE_CONTENT]
        summary.changed += len(written)
        summary.duplicates += len(gone)
        for page in pages:
            if page not in written and page not in gone:
                summary.failed += 1
                summary.outcomes[str(_kind(page))] += 1
        await self.queue.reextracted(
            [
                (p.claim.url_hash, p.claim.host, p.outcome.content_hash)
                for p in written
                if p.outcome is not None and p.outcome.content_hash is not None
            ]
        )
        await self.queue.relink_duplicates(
            [
                Relink(p.claim.url_hash, p.claim.host, p.outcome.final_url)
                for p in gone
                if p.outcome is not None and p.outcome.final_url is not None
            ]
        )

    def _read(self, documents: Sequence[dict[str, Any]]) -> list[StoredRecord | None]:
        """Each document's response record (in a thread: files and gzip); None for one
        that cannot be read."""
        records: list[StoredRecord | None] = []
        for doc in documents:
            location = Location(doc["warc_file"], doc["warc_offset"], doc["warc_length"])
            try:
                record: StoredRecord | None = read_record(self.archive_dir, location)
            except RecordUnreadable as exc:
                log.warning("reextract: %s: %s", doc["url"], exc)
                record = None
            if record is not None and record.http_status is None:
                record = _rendered(record)  # a rendered page's DOM, or not a response
            records.append(record)
        return records


def _rendered(record: StoredRecord) -> StoredRecord | None:
    """A rendered page's `conversion` record (its DOM, fetcher.render_step) as the response
    it is re-extracted from: a 200 of HTML (it was rendered from a 2xx). None for another
    record without an HTTP head (a revisit, a resource)."""
    if record.headers.get("WARC-Type") != "conversion":
        return None
    kind = record.headers.get("Content-Type", RENDERED_TYPE)
    return replace(record, http_status=200, http_headers=[("Content-Type", kind)])


def _status(record: StoredRecord) -> int:
    assert record.http_status is not None  # `_read` keeps only responses
    return record.http_status


def _headers(record: StoredRecord) -> CIMultiDictProxy[str]:
    """The response's headers, as the fetch pipeline has them (case-insensitive)."""
    return CIMultiDictProxy(CIMultiDict(record.http_headers))


def _same(document: RawDocument, stored: dict[str, Any]) -> bool:
    return all(getattr(document, name) == _comparable(name, stored.get(name)) for name in COMPARED)


def _same_response(document: RawDocument, stored: dict[str, Any]) -> RawDocument:
    """The new document with what it keeps of the stored one: its response is the same
    (its time, its status, its archive pointer)."""
    fetched_at = stored["fetched_at"]
    return replace(
        document,
        final_url=stored.get("final_url"),
        fetched_at=fetched_at
        if isinstance(fetched_at, datetime)
        else datetime.fromisoformat(fetched_at),
        http_status=stored.get("http_status"),
        warc_file=stored.get("warc_file"),
        warc_offset=stored.get("warc_offset"),
        warc_length=stored.get("warc_length"),
        warc_record_id=stored.get("warc_record_id"),
    )


def _comparable(name: str, value: Any) -> Any:
    """A stored value as a `RawDocument` holds it (a reader may give dates as text)."""
    if name in ("published_at", "modified_at") and isinstance(value, str):
        return datetime.fromisoformat(value)
    if name == "paywalled":
        return bool(value)
    if name == "tags":
        return tuple(value or ())
    return value


def _kind(page: Page) -> OutcomeKind | None:
    return page.outcome.kind if page.outcome is not None else None


async def run_reextract(
    settings: Settings,
    db: Database,
    where: DocumentFilter,
    *,
    dry_run: bool = False,
    extract_processes: int | None = None,
    now: datetime | None = None,
    progress: Callable[[ReextractSummary], None] | None = None,
) -> ReextractSummary:
    """Re-extract the documents `where` selects, with the fetcher's settings (its
    extraction pool, sink, duplicates and versions); no HTTP client is opened."""
    overrides: dict[str, object] = {}
    if extract_processes is not None:
        overrides["extract_processes"] = extract_processes
    config = FetcherConfig.from_settings(settings, **overrides)
    sink = await open_sink(settings, db)
    reader = open_reader(settings, db)
    extraction = extraction_for(config)
    try:
        queue = QueueRepository(db, QueuePolicy.from_settings(settings))
        steps = ResponseSteps(
            sink=sink,
            config=config,
            duplicates=DuplicateContent(db),
            queue=queue,
            sink_backoff=SinkBackoff(config.sink_retry_s, config.sink_retry_max_s),
            extraction=extraction,
            versions=(
                DocumentVersions(db, config.document_versions) if config.document_versions else None
            ),
            near_duplicates=NearDuplicates(db),
        )
        reextractor = Reextractor(
            steps=steps,
            documents=reader,
            sources=SourceCache(SourceRepository(db)),
            queue=queue,
            archive_dir=archive_location(settings),
            dry_run=dry_run,
        )
        return await reextractor.run(where, now=now, progress=progress)
    finally:
        await asyncio.to_thread(extraction.close)
        await reader.close()
        await sink.close()
