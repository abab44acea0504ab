"""What happens to a page once its response is in, whoever got the response
(`ResponseSteps`): the decision on it and the verdicts, the extraction (on the extraction
pool), and the store step. `store(pages)`: reserve each document's keys (its canonical,
its content hash) in `document_keys`, drop the pages whose article another URL holds,
write the rest to the sink and remove the documents they replace (docs/duplicates.md);
while the sink is down, the pages wait (`SinkBackoff`); a changed text keeps the document
it replaces as an earlier version (frontier.versions).

The fetch pipeline (`fetcher.pipeline.BatchPipeline`) extends it with the requests;
`frontier reextract` (fetcher.reextract) runs it over responses read back from the WARC
archive, so whatever is decided here holds for both.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from fetcher.archiving import ArchiveStep
from fetcher.canonical import site_of
from fetcher.config import FetcherConfig
from fetcher.decisions import Action, decide
from fetcher.extract import Extracted
from fetcher.extract_job import Extraction, ExtractionCrashed, ExtractionOverLimit
from fetcher.extract_pool import ExtractionPool
from fetcher.extract_thread import InProcessExtraction
from fetcher.language import other_language
from fetcher.page import Page
from fetcher.render_step import RenderStep
from fetcher.sink_backoff import SinkBackoff
from fetcher.verdict import Verdict
from frontier.archive.records import RENDERED_TYPE
from frontier.clock import utcnow
from frontier.errors import DatabaseUnavailable
from frontier.link_header import link_values
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, OutcomeKind, Relink, SourceRef
from frontier.robots_directives import NOINDEX, names_for
from frontier.sinks import DocumentRejected, RawDocument, Sink, SinkUnavailable
from frontier.sinks.duplicates import DuplicateContent, KeyKind, Reservation, TakenOver
from frontier.sinks.near_duplicates import Fingerprinted, NearDuplicates, Placed
from frontier.states import CANONICAL_DUPLICATE, CONTENT_DUPLICATE
from frontier.urls import url_hash
from frontier.versions import DocumentVersions

log = logging.getLogger(__name__)
NOT_EXTRACTED = Extraction(Extracted(), None, None, 0, 0)  # extraction off (benchmarks)


class ResponseSteps:
    """What happens to a page once its response is in, whoever got the response: the
    decision on it and the verdicts, the extraction (on the extraction pool) and the store
    step (canonical and content keys, duplicates, the archive, the sink write, earlier
    versions kept). The fetch pipeline (`BatchPipeline`) and `frontier reextract`
    (fetcher.reextract, responses read back from the WARC archive) both run it, so a rule
    added here holds for both."""

    def __init__(
        self,
        *,
        sink: Sink,
        config: FetcherConfig,
        duplicates: DuplicateContent,
        queue: QueueRepository,
        sink_backoff: SinkBackoff,
        extraction: ExtractionPool | InProcessExtraction | None = None,
        archive: ArchiveStep | None = None,
        versions: DocumentVersions | None = None,
        near_duplicates: NearDuplicates | None = None,
        renderer: RenderStep | None = None,
    ) -> None:
        self.archive = archive
        self._archiving = archive is not None
        self.renderer = renderer  # pages rendered in a browser (fetcher.render_step)
        self.near_duplicates = near_duplicates
        self.extraction = extraction or InProcessExtraction()
        self.sink = sink
        self.config = config
        self.duplicates = duplicates
        self.queue = queue
        self.sink_backoff = sink_backoff
        self.versions = versions
        self.robots_names = names_for(config.user_agent)

    async def on_response(
        self,
        page: Page,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
        now: datetime | None = None,
    ) -> None:
        decision = decide(status, headers, body, now, self.robots_names)
        if decision.action is Action.FINISH:
            page.end(
                decision.kind,
                http_status=status,
                error=decision.error,
                retry_after_s=decision.retry_after_s,
                redirect_to=decision.redirect_to,
            )
            return
        get = headers.get
        content_type = get("Content-Type")
        if self.config.extract:
            renderer = self.renderer
            if renderer is not None and renderer.wants(page, content_type, None):  # always
                dom = await renderer.render(page, status, headers, body, archive=self._archiving)
                if dom is not None:
                    body, content_type = dom, RENDERED_TYPE
                    page.rendered_dom = dom
            extraction = await self._extract(page, status, headers, body, content_type)
            if extraction is None:
                return
            if renderer is not None and renderer.wants(page, content_type, extraction):
                # auto: a client-side app's shell, before its verdict (an empty page)
                dom = await renderer.render(page, status, headers, body, archive=self._archiving)
                if dom is not None:
                    page.rendered_dom = dom
                    extraction = await self._extract(page, status, headers, dom, RENDERED_TYPE)
                    if extraction is None:
                        return
            verdict = _not_the_article(extraction)
            if verdict is not None:
                why = verdict.reason
                if page.render_error:  # the shell it stayed, and why
                    why = f"{why} (not rendered: {page.render_error})"
                page.end(verdict.kind, http_status=status, error=why)
                return
            page.canonical = extraction.canonical
            page.names_itself = extraction.names_itself
        else:
            extraction = NOT_EXTRACTED
        claim = page.claim
        extracted = extraction.extracted
        excluded = other_language(extracted, page.source.languages)
        if excluded is not None:
            page.end(OutcomeKind.UNSUPPORTED_CONTENT, http_status=status, error=excluded)
            return
        page.document = RawDocument(
            url_hash=claim.url_hash,
            url=claim.url,
            final_url=None,
            source_id=claim.source_id,
            source_name=page.source.name,
            host=claim.host,
            origin=str(claim.origin),
            title=extracted.title,
            body=extracted.body,
            summary=extracted.summary,
            author=extracted.author,
            published_at=extracted.published_at,
            image_url=extracted.image_url,
            language=extracted.language,
            content_hash=extraction.content_hash,
            word_count=extraction.word_count,
            extractor=extracted.extractor,
            http_status=status,
            fetched_at=utcnow(),
            paywalled=extracted.paywalled,
            minhash=extraction.minhash.hex() if extraction.minhash else None,
            detected_language=extracted.detected_language,
            language_confidence=extracted.language_confidence,
            modified_at=extracted.modified_at,
            section=extracted.section,
            tags=extracted.tags,
            paragraphs=tuple(extracted.paragraphs),
            markdown=extracted.markdown,
        )
        page.end(
            OutcomeKind.FETCHED,
            http_status=status,
            content_hash=extraction.content_hash,
            etag=get("ETag"),
            last_modified=get("Last-Modified"),
        )

    async def _extract(
        self,
        page: Page,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
        content_type: str | None,
    ) -> Extraction | None:
        """The page's extraction on the extraction pool; None when it ended the page."""
        claim = page.claim
        try:
            return await self.extraction.extract(
                body,
                content_type,
                claim.url,
                page.source.selectors,
                claim.discovery_meta,
                link_values(headers),
                page.fetch_url or claim.request_url,  # the URL that answered
                self.robots_names,
            )
        except ExtractionCrashed as exc:  # a page that kills the parser's process
            log.error("extraction crashed for %s: %s", claim.url, exc)
            page.end(OutcomeKind.FAILED, http_status=status, error=f"extraction crashed: {exc}")
        except ExtractionOverLimit as exc:  # a page costlier than its limits: stopped
            log.warning("extraction stopped for %s: %s", claim.url, exc)
            page.end(OutcomeKind.FAILED, http_status=status, error=f"extraction failed: {exc}")
        except Exception as exc:  # extraction must never lose the claim
            log.exception("extraction failed for %s", claim.url)
            page.end(OutcomeKind.FAILED, http_status=status, error=f"extraction failed: {exc}")
        return None

    # -- store ----------------------------------------------------------------------------

    async def store(self, pages: list[Page]) -> None:
        """Store the documents of the pages fetched; safe to repeat (the sink is
        idempotent, a key held is refreshed). Raises DatabaseUnavailable when the database
        is down. docs/duplicates.md: each document first reserves its keys (the canonical
        its page names, then its content hash); a page that loses one is a duplicate
        linked to the holder; one that takes a key over replaces the holder's document."""
        _drop_unchanged(pages)
        await self._unindex(pages)
        candidates = [p for p in pages if p.document is not None]
        taken = await self._reserve(candidates, KeyKind.CANONICAL)
        taken += await self._reserve([p for p in candidates if p.document], KeyKind.CONTENT)
        # A variant that lost its text to another URL holds its canonical for nothing.
        await self.duplicates.release(
            [
                (url_hash(p.canonical), KeyKind.CANONICAL, p.claim.url_hash)
                for p in candidates
                if p.document is None and p.canonical is not None
            ]
        )
        if self.archive is not None:
            await self._archive(pages)
        stored = [p for p in candidates if p.document is not None]
        placed = await self._place(stored)
        replaced = await self._replaced(stored)
        if stored:
            await self._write(stored)
        written = [p for p in stored if _kind(p) is OutcomeKind.FETCHED]
        if self.near_duplicates is not None:
            done = {p.claim.url_hash for p in written}
            await self.near_duplicates.record([x for x in placed if x.url_hash in done])
        if replaced and self.versions is not None:
            kept = {p.claim.url_hash for p in written}
            await self.versions.keep([d for d in replaced if d["url_hash"] in kept])
        refused = [p for p in stored if _kind(p) is OutcomeKind.FAILED]
        await self.duplicates.release([key for p in refused for key in _keys(p)])
        await self._relink(written, taken)
        # A revisit whose new text another URL holds: its earlier document goes.
        gone = [p for p in candidates if p.claim.is_revisit and _kind(p) is _DUPLICATE]
        if gone:
            await self.sink.delete([p.claim.url_hash for p in gone])
            await self._forget_near([p.claim.url_hash for p in gone])
        await self.duplicates.forget_stale_content(
            [
                (p.claim.url_hash, p.outcome.content_hash)
                for p in written + gone
                if p.outcome is not None
                and p.outcome.content_hash
                # only a URL stored before under another text has keys to forget
                and p.claim.content_hash not in (None, p.outcome.content_hash)
            ]
        )
        await self._submit_canonicals(written)

    async def _place(self, stored: list[Page]) -> list[Placed]:
        """Each document about to be written names the earliest document of its
        near-duplicate cluster, when it has one (docs/duplicates.md, "Near-duplicates")."""
        if self.near_duplicates is None:
            return []
        by_hash = {
            p.claim.url_hash: p
            for p in stored
            if p.document is not None and p.document.minhash is not None
        }
        placed = await self.near_duplicates.assign(
            [
                Fingerprinted(h, bytes.fromhex(p.document.minhash))
                for h, p in by_hash.items()
                if p.document is not None and p.document.minhash is not None
            ]
        )
        for place in placed:
            page = by_hash[place.url_hash]
            if place.near_duplicate_of is not None and page.document is not None:
                page.document = replace(page.document, near_duplicate_of=place.near_duplicate_of)
        return placed

    async def _forget_near(self, url_hashes: list[str]) -> None:
        """Documents gone stop being near-duplicate candidates."""
        if self.near_duplicates is not None and url_hashes:
            await self.near_duplicates.forget(url_hashes)

    async def _replaced(self, pages: list[Page]) -> list[dict[str, Any]]:
        """The stored documents that these pages' changed texts replace, read before the
        write: kept as earlier versions once it succeeded (frontier.versions)."""
        if self.versions is None:
            return []
        changing = {
            p.claim.url_hash: p.document.content_hash
            for p in pages
            if p.document is not None
            and p.claim.content_hash is not None
            and p.document.content_hash != p.claim.content_hash
        }
        found = await asyncio.gather(*(self.sink.get(h) for h in changing))
        # one holding the new text already is a write repeated (after a crash)
        return [d for d in found if d is not None and d["content_hash"] != changing[d["url_hash"]]]

    async def _archive(self, pages: list[Page]) -> None:
        """Every exchange into the WARC archive, each document given its pointer; the
        pages of a write the disk refused wait and are fetched again (their keys go)."""
        assert self.archive is not None
        failed = await self.archive.keep(pages)
        if failed is None:
            return
        await self.duplicates.release(
            [key for p in failed.pages if p.document is not None for key in _keys(p)]
        )
        for page in failed.pages:
            page.document = None
            page.end(OutcomeKind.DEFERRED, retry_after_s=failed.wait_s, error=failed.error)

    async def _unindex(self, pages: list[Page]) -> None:
        """A revisit that now says `noindex`: the document its earlier fetch stored goes,
        with the keys it held, as Google drops such a page from its index on recrawl."""
        gone = [
            p.claim.url_hash
            for p in pages
            if p.claim.is_revisit and _kind(p) is OutcomeKind.NOINDEX
        ]
        if gone:
            await self.sink.delete(gone)
            await self.duplicates.forget(gone)
            await self._forget_near(gone)

    async def _reserve(self, pages: list[Page], kind: KeyKind) -> list[tuple[TakenOver, str]]:
        """Reserve each page's key of this kind; a page that does not hold it after is a
        duplicate of the holder. Returns the keys taken over, each with the url_hash of
        the page now holding it."""
        asks = [r for r in (self._reservation(p, kind) for p in pages) if r is not None]
        decision = await self.duplicates.reserve([r for r, _ in asks])
        for reservation, page in asks:
            holder = decision.holders.get((reservation.key, kind))
            if holder is None or holder.url_hash == page.claim.url_hash:
                continue
            _duplicate(page, holder.url, canonical=kind is KeyKind.CANONICAL)
        batch = {p.claim.url_hash for p in pages}
        holding = {(r.key, r.kind): r.url_hash for r, p in asks if p.document is not None}
        return [
            (t, holding[(t.key, t.kind)])
            for t in decision.taken_over
            if (t.key, t.kind) in holding and t.url_hash not in batch
        ]

    def _reservation(self, page: Page, kind: KeyKind) -> tuple[Reservation, Page] | None:
        document = page.document
        assert document is not None
        claimed = page.claim.url if page.names_itself else page.canonical
        if kind is KeyKind.CANONICAL:
            if claimed is None:
                return None
            key = url_hash(claimed)
        elif document.content_hash is None:
            return None
        else:
            key = document.content_hash
        reservation = Reservation(
            key=key,
            kind=kind,
            url_hash=page.claim.url_hash,
            url=page.claim.url,
            host=page.claim.host,
            canonical_claimed=claimed,
            own_host=site_of(page.claim.host) in page.source.sites,
            published_at=document.published_at,
        )
        return reservation, page

    async def _relink(self, written: list[Page], taken: list[tuple[TakenOver, str]]) -> None:
        """The documents written took keys over from other URLs: those URLs' documents
        go, and their records link to the new holder."""
        holders = {p.claim.url_hash: p.claim.url for p in written}
        done = [(t, h) for t, h in taken if h in holders]
        if not done:
            return
        previous = sorted({t.url_hash for t, _ in done})
        await self.sink.delete(previous)
        await self.queue.relink_duplicates(
            [Relink(t.url_hash, t.host, holders[h]) for t, h in done]
        )
        await self.duplicates.forget(previous)
        await self._forget_near(previous)
        await self.duplicates.relinked([(t.key, t.kind, h) for t, h in done])

    async def _submit_canonicals(self, written: list[Page]) -> None:
        """A variant stored under its own URL names a canonical not fetched yet: it goes
        into the frontier, so that its own fetch verifies it (docs/duplicates.md)."""
        candidates = [
            Candidate(
                url=p.canonical,
                source=SourceRef(p.claim.source_id),
                origin=p.claim.origin,
                parent_url=p.claim.url,
                depth=p.claim.depth,
            )
            for p in written
            if p.canonical is not None
        ]
        if candidates:
            await self.queue.submit(candidates)

    async def _write(self, pages: list[Page]) -> None:
        documents = [p.document for p in pages if p.document is not None]
        try:
            await self.sink.write(documents)
        except DatabaseUnavailable:
            raise  # the PostgreSQL sink's database is down: the worker holds the pages
        except DocumentRejected as exc:
            for page in pages:
                if page.document is not None and page.document.url_hash in exc.reasons:
                    assert page.outcome is not None
                    reason = exc.reasons[page.document.url_hash]
                    page.outcome = replace(
                        page.outcome,
                        kind=OutcomeKind.FAILED,
                        error=f"sink {self.sink.name} refused the document: {reason}",
                    )
        except Exception as exc:  # SinkUnavailable, or a failure nobody planned for
            # (a permission refused, a sink bug): no attempt is counted (the page is fine)
            # and the URLs wait with backoff, instead of being released due at once and
            # claimed again in a hot loop.
            wait = self.sink_backoff.failed(time.monotonic())
            what = "unavailable" if isinstance(exc, SinkUnavailable) else "failed"
            log.error(
                "sink %s %s (%s); %d URLs back to pending and claiming paused for %.0fs",
                self.sink.name,
                what,
                exc,
                len(pages),
                wait,
                exc_info=what == "failed",
            )
            for page in pages:
                page.end(OutcomeKind.DEFERRED, retry_after_s=wait, error=f"sink {what}: {exc}")
            return
        self.sink_backoff.stored()


def _not_the_article(extraction: Extraction) -> Verdict | None:
    """The page's verdict, in order: a challenge (the wall says noindex, not the article),
    then a `<meta>` robots `noindex` for us, then a soft 404 or an empty page."""
    verdict = extraction.verdict
    if verdict is not None and verdict.kind is OutcomeKind.CHALLENGE:
        return verdict
    if NOINDEX in extraction.robots:
        rules = ", ".join(sorted(extraction.robots))[:300]
        return Verdict(OutcomeKind.NOINDEX, f'<meta name="robots">: {rules}')
    return verdict


def _drop_unchanged(pages: list[Page]) -> None:
    """A revisit whose text is the one stored (same content_hash) writes nothing: it
    completes as `not_modified`, keeping the validators the server sent this time. Only
    for revisits: another URL's row may hold the hash of a document never stored (a
    sink that refused it)."""
    for page in pages:
        document, outcome = page.document, page.outcome
        if (
            document is not None
            and outcome is not None
            and page.claim.is_revisit
            and page.canonical is None
            and document.content_hash is not None
            and document.content_hash == page.claim.content_hash
        ):
            page.outcome = replace(outcome, kind=OutcomeKind.NOT_MODIFIED)
            page.document = None


_DUPLICATE = OutcomeKind.DUPLICATE_CONTENT


def _kind(page: Page) -> OutcomeKind | None:
    return page.outcome.kind if page.outcome is not None else None


def _keys(page: Page) -> list[tuple[str, KeyKind, str]]:
    """The keys a page whose document was refused had reserved."""
    keys = []
    claimed = page.claim.url if page.names_itself else page.canonical
    if claimed is not None:
        keys.append((url_hash(claimed), KeyKind.CANONICAL, page.claim.url_hash))
    if page.outcome is not None and page.outcome.content_hash:
        keys.append((page.outcome.content_hash, KeyKind.CONTENT, page.claim.url_hash))
    return keys


def _duplicate(page: Page, holder: str, *, canonical: bool = False) -> None:
    """The page's article is stored under `holder`: no document, linked to it."""
    assert page.outcome is not None
    page.outcome = replace(
        page.outcome,
        kind=OutcomeKind.DUPLICATE_CONTENT,
        error=(CANONICAL_DUPLICATE if canonical else CONTENT_DUPLICATE).format(holder=holder),
        final_url=holder,
    )
    page.document = None
