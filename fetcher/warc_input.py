"""WARC input (`frontier import-warc`): the HTML responses of existing WARC files (such as
Common Crawl's CC-NEWS), gzip or not, through the fetch pipeline's extraction, verdicts
and deduplication into the sink, with no request made.

Each response record that passes the filters (`ImportFilter`) is submitted to the frontier
(origin `manual`, its `discovery_meta` naming the WARC file, offset and record) and taken
as a claim (queue.sql `take`: only a URL never fetched), then completed like a fetch
(the worker's `_finish`): its URL ends `fetched`, or pending on its source's revisit
schedule, so a later submit of it is a duplicate. A URL the frontier fetched before is
left alone (`known`).

Bounded memory whatever a file holds: the records are read in a thread, in batches of at
most `BATCH_RECORDS` records and `BATCH_BYTES` bytes of bodies; a record whose payload is
over the body cap (FRONTIER_FETCH_MAX_BODY_BYTES) is skipped unread and counted; extraction
runs on the fetcher's extraction pool with its limits. A malformed file ends with an error
that names the file and the offset of the last record read; the records before it are
kept.

The glue to the pipeline is `_extract` and `_store` alone: the responses go through
`ResponseSteps.on_response` (fetcher.response_steps: the decision, the verdicts and the
extraction, which the fetch and `frontier reextract` run too) and `Fetcher._finish`
(store, complete, log), the same steps as a fetched page's.
"""

from __future__ import annotations

import asyncio
import fnmatch
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from fastwarc.warc import ArchiveIterator, WarcRecordType
from multidict import CIMultiDict

from fetcher.config import FetcherConfig
from fetcher.decisions import HTML_TYPES, media_type
from fetcher.page import Page
from fetcher.service import extraction_for, http_limits
from fetcher.source_cache import UNKNOWN
from fetcher.summary import FetchSummary
from fetcher.worker import Fetcher
from frontier.db import Database
from frontier.parse_pool import ParsePool
from frontier.queue_values import Candidate, OutcomeKind, QueuePolicy, SourceRef
from frontier.safe_http.client import SafeClient
from frontier.safe_http.errors import HttpError
from frontier.settings import Settings
from frontier.sinks.configured import open_sink
from frontier.sources import SourceRepository
from frontier.states import Origin
from frontier.submit_rows import prepare
from frontier.urls import InvalidURL, identity_and_spelling, url_hash, url_host

BATCH_RECORDS = 100  # responses through the pipeline at once
BATCH_BYTES = 32 << 20  # and at most this many bytes of bodies
# Headers that name an encoding the reader has already undone (`auto_decode`)
DECODED = ("Content-Encoding", "Transfer-Encoding")

Progress = Callable[[str, int, int, "ImportCounts"], None]  # file, bytes read, size, counts


class WarcUnreadable(Exception):
    """A file that is not WARC, or holds a malformed record."""


@dataclass(slots=True)
class ImportCounts:
    """What an import did; `as_json` is the `--json` summary."""

    records: int = 0  # WARC records read, of every type
    html: int = 0  # response records with status 200 and an HTML type
    imported: int = 0  # stored as documents
    duplicates: int = 0  # the article another URL holds (duplicate_content)
    known: int = 0  # a URL the frontier had fetched (or was fetching) already: left alone
    filtered: int = 0  # left out by --host or --url-pattern
    too_large: int = 0  # a payload over the body cap: skipped unread
    errors: int = 0  # unusable URL, extraction failed, sink refused, unreadable file
    bytes: int = 0  # of the files, as read (compressed)
    messages: list[str] = field(default_factory=list)  # one per error, the first 100

    def error(self, message: str) -> None:
        self.errors += 1
        if len(self.messages) < 100:
            self.messages.append(message)

    def as_json(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "html": self.html,
            "imported": self.imported,
            "duplicates": self.duplicates,
            "known": self.known,
            "filtered": self.filtered,
            "skipped_too_large": self.too_large,
            "errors": self.errors,
            "bytes": self.bytes,
            "error_messages": self.messages,
        }


@dataclass(frozen=True, slots=True)
class ImportFilter:
    """Which responses to import: `hosts` (a host or any of its subdomains; empty: all)
    and a URL pattern (a regular expression searched in the URL, or a glob matched
    against the whole URL)."""

    hosts: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None

    @classmethod
    def of(
        cls, hosts: tuple[str, ...] = (), regex: str | None = None, glob: str | None = None
    ) -> ImportFilter:
        """Raises re.error for a pattern that does not compile."""
        pattern = re.compile(regex) if regex else None
        if glob:
            pattern = re.compile(fnmatch.translate(glob))
        return cls(tuple(h.lower().strip(".") for h in hosts), pattern)

    def accepts(self, url: str, host: str) -> bool:
        if self.hosts and not any(host == h or host.endswith("." + h) for h in self.hosts):
            return False
        return self.pattern is None or self.pattern.search(url) is not None


@dataclass(frozen=True, slots=True)
class ArchivedResponse:
    """One HTML response record read from a WARC file."""

    url: str  # WARC-Target-URI, as the crawler spelt it
    url_hash: str
    host: str
    headers: CIMultiDict[str]
    body: bytes
    offset: int  # where its record starts in the file
    record_id: str | None
    date: str | None


class WarcReader:
    """The response records of one WARC stream that pass the filter, read with FastWARC
    (gzip per record, or not compressed). Iterate it in one thread at a time."""

    def __init__(
        self,
        stream: BinaryIO,
        name: str,
        *,
        max_body_bytes: int,
        accepts: ImportFilter,
        counts: ImportCounts,
        keep_trailing_slash: bool = False,
    ) -> None:
        self.stream = stream
        self.name = name
        self.max_body_bytes = max_body_bytes
        self.accepts = accepts
        self.counts = counts
        self.keep_trailing_slash = keep_trailing_slash
        self.offset = 0  # where the last record read starts
        self._records = self._read()

    def position(self) -> int:
        """The bytes of the file read so far."""
        return self.stream.tell()

    def batch(self) -> list[ArchivedResponse]:
        """The next responses, up to BATCH_RECORDS of them and BATCH_BYTES of bodies;
        empty at the end of the file. Raises WarcUnreadable at a malformed record."""
        batch: list[ArchivedResponse] = []
        size = 0
        try:
            for response in self._records:
                batch.append(response)
                size += len(response.body)
                if len(batch) >= BATCH_RECORDS or size >= BATCH_BYTES:
                    break
        except WarcUnreadable as exc:
            if not batch:
                raise
            self._records = _raising(exc)  # the responses read before it go first
        return batch

    def _read(self) -> Iterator[ArchivedResponse]:
        records = ArchiveIterator(
            self.stream,
            parse_http=True,
            auto_decode="all",  # chunked and gzip'd payloads as the server sent them
            fsspec_args=False,
        )
        counts = self.counts
        try:
            for record in records:
                self.offset = record.stream_pos
                counts.records += 1
                if record.record_type != WarcRecordType.response:
                    continue
                response = self._response(record)
                if response is not None:
                    yield response
        except OSError as exc:
            raise WarcUnreadable(
                f"{self.name}: malformed WARC data after the record at offset {self.offset} "
                f"({exc}); the records before it were read"
            ) from None

    def _response(self, record: Any) -> ArchivedResponse | None:
        http = record.http_headers
        if http is None or http.status_code != 200:
            return None
        if media_type(http.get("Content-Type")) not in HTML_TYPES:
            return None
        counts = self.counts
        counts.html += 1
        # WARC/1.1's own example wrapped it in <...>, and some writers followed it.
        target = (record.headers.get("WARC-Target-URI") or "").strip().strip("<>")
        try:
            identity, _ = identity_and_spelling(
                target, keep_trailing_slash=self.keep_trailing_slash
            )
        except InvalidURL as exc:
            counts.error(f"{self.name} at {record.stream_pos}: {exc.reason} ({target[:200]})")
            return None
        host = url_host(identity)
        if not self.accepts.accepts(identity, host):
            counts.filtered += 1
            return None
        if record.content_length > self.max_body_bytes:
            counts.too_large += 1
            return None
        body = record.reader.read(self.max_body_bytes + 1)  # decoded: may be larger
        if len(body) > self.max_body_bytes:
            counts.too_large += 1
            return None
        headers = CIMultiDict((k, v) for k, v in http.items() if k.title() not in DECODED)
        return ArchivedResponse(
            url=target,
            url_hash=url_hash(identity),
            host=host,
            headers=headers,
            body=body,
            offset=record.stream_pos,
            record_id=record.headers.get("WARC-Record-ID"),
            date=record.headers.get("WARC-Date"),
        )


def _raising(exc: Exception) -> Iterator[ArchivedResponse]:
    raise exc
    yield  # a generator


class WarcImport:
    """Imports WARC files through `fetcher`'s pipeline, filing the documents under
    `source`. The fetcher's archive must be off: these responses are archived already."""

    def __init__(
        self,
        fetcher: Fetcher,
        source: SourceRef,
        *,
        max_body_bytes: int,
        accepts: ImportFilter | None = None,
        progress: Progress | None = None,
    ) -> None:
        assert fetcher.archive is None
        self.fetcher = fetcher
        self.source = source
        self.max_body_bytes = max_body_bytes
        self.accepts = accepts or ImportFilter()
        self.progress = progress
        self.counts = ImportCounts()

    async def import_file(self, path: Path, name: str | None = None) -> None:
        """Import one file; an unreadable one is counted as an error, naming it."""
        name = name or str(path)
        try:
            stream = await asyncio.to_thread(path.open, "rb")
        except OSError as exc:
            self.counts.error(f"{name}: {exc.strerror or exc}")
            return
        with stream:
            size = path.stat().st_size
            reader = WarcReader(
                stream,
                name,
                max_body_bytes=self.max_body_bytes,
                accepts=self.accepts,
                counts=self.counts,
                keep_trailing_slash=self.source.keep_trailing_slash,
            )
            # One batch is stored while the next is read and extracted (at most two in
            # memory); the stores run one after another, in the file's order.
            storing: asyncio.Task[None] | None = None
            try:
                while batch := await asyncio.to_thread(reader.batch):
                    pages = await self._extract(batch, name)
                    if storing is not None:
                        await storing
                    storing = asyncio.create_task(self._store(pages, name))
                    self._report(name, reader.position(), size)
            except WarcUnreadable as exc:
                self.counts.error(str(exc))
            finally:
                if storing is not None:
                    await storing
            done = reader.position()
            self.counts.bytes += done
            self._report(name, done, size)

    def _report(self, name: str, done: int, size: int) -> None:
        if self.progress is not None:
            self.progress(name, done, size, self.counts)

    async def _extract(self, responses: list[ArchivedResponse], name: str) -> list[Page]:
        """Submit the batch's URLs, take those never fetched, and run their responses
        through the pipeline as a fetch's: the decision and the extraction."""
        fetcher = self.fetcher
        queue = fetcher.queue
        first: dict[str, ArchivedResponse] = {}
        for response in responses:
            if response.url_hash in first:
                self.counts.known += 1  # the same URL again in the batch
            else:
                first[response.url_hash] = response
        candidates = [
            Candidate(
                r.url,
                self.source,
                Origin.MANUAL,
                discovery_meta={
                    "warc_file": name,
                    "warc_offset": r.offset,
                    "warc_record_id": r.record_id,
                    "warc_date": r.date,
                },
            )
            for r in first.values()
        ]
        prepared = prepare(candidates, queue.policy.default_delay_ms)
        for rejection in prepared.rejected:
            self.counts.error(f"{name}: {rejection.reason} ({rejection.url})")
        await queue.submit_prepared(prepared)
        claims = await queue.take(
            fetcher.worker_id, [(h, r.host) for h, r in first.items() if h in prepared.rows]
        )
        self.counts.known += len(prepared.rows) - len(claims)
        if not claims:
            return []
        order = {h: i for i, h in enumerate(first)}
        claims.sort(key=lambda c: order[c.url_hash])  # the file's order: the first holds
        pipeline = fetcher.pipeline
        infos = await pipeline.sources.get_many(c.source_id for c in claims)
        pages = [
            Page(c, infos.get(c.source_id, UNKNOWN) if c.source_id else UNKNOWN) for c in claims
        ]
        await asyncio.gather(
            *(
                pipeline.on_response(  # the decision and extraction of a fetched page
                    page, 200, first[page.claim.url_hash].headers, first[page.claim.url_hash].body
                )
                for page in pages
            )
        )
        return pages

    async def _store(self, pages: list[Page], name: str) -> None:
        """The worker's own end of a batch: dedup and store, complete (the revisit
        schedule), log; then count how each page ended."""
        if pages:
            await self.fetcher._finish(pages, FetchSummary(), None)
        for page in pages:
            kind = page.outcome.kind if page.outcome is not None else None
            if kind is OutcomeKind.FETCHED:
                self.counts.imported += 1
            elif kind is OutcomeKind.DUPLICATE_CONTENT:
                self.counts.duplicates += 1
            else:
                error = page.outcome.error if page.outcome is not None else "no outcome"
                self.counts.error(f"{name}: {page.claim.url}: {kind}: {error}")


DOWNLOAD_MAX_BYTES = 16 << 30  # a WARC file given by URL (CC-NEWS files are about 1 GiB)


def is_url(location: str) -> bool:
    return location.split(":", 1)[0].lower() in ("http", "https") and "://" in location


async def run_import(
    settings: Settings,
    db: Database,
    locations: list[str],
    *,
    source: str,
    accepts: ImportFilter,
    progress: Progress | None = None,
    extract_processes: int | None = None,
) -> ImportCounts:
    """Import the WARC files at `locations` (paths, or http(s) URLs downloaded through the
    safe client, SSRF guard included, into a temporary file first), filing the documents
    under the source named `source`. Raises UnknownSource for a source that does not
    exist."""
    ref = (await SourceRepository(db).get(source)).ref
    overrides: dict[str, object] = {"archive_dir": None}  # these responses are archived
    if extract_processes is not None:
        overrides["extract_processes"] = extract_processes
    config = FetcherConfig.from_settings(settings, **overrides)
    sink = await open_sink(settings, db)
    extraction = extraction_for(config)
    try:
        async with (
            SafeClient(http_limits(settings, config.concurrency)) as client,
            ParsePool(config.parse) as parser,  # robots.txt's, never used: no request
        ):
            policy = QueuePolicy.from_settings(settings)
            fetcher = Fetcher(db, client, sink, config, policy, extraction, parser)
            warcs = WarcImport(
                fetcher,
                ref,
                max_body_bytes=settings.fetch_max_body_bytes,
                accepts=accepts,
                progress=progress,
            )
            for location in locations:
                if is_url(location):
                    await _import_url(warcs, client, location)
                else:
                    await warcs.import_file(Path(location))
            return warcs.counts
    finally:
        await asyncio.to_thread(extraction.close)
        await sink.close()


async def _import_url(warcs: WarcImport, client: SafeClient, url: str) -> None:
    with tempfile.NamedTemporaryFile(prefix="frontier-warc-", suffix=".warc") as spool:
        try:
            await client.download(url, spool, max_bytes=DOWNLOAD_MAX_BYTES)
            await asyncio.to_thread(spool.flush)
        except HttpError as exc:
            warcs.counts.error(f"{url}: {exc}")
            return
        await warcs.import_file(Path(spool.name), url)
