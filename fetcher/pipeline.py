"""The batch pipeline: from claimed URLs to pages with an outcome and, for those fetched,
a stored document.

`fetch(claims)`: source settings (fetchprotection), the robots.txt step, the requests (each
host held by the claim, its requests paced and the host given back when the page's answer
is in: `fetcher.politeness`), the decision on each response and the extraction.
`store(pages)`: move a variant's document to its trusted canonical URL (or drop it when the
canonical is stored), drop pages whose content is already indexed under another URL, write
the rest to the sink (docs/duplicates.md); while the sink is down, the pages wait (`SinkBackoff`).
Completing the claims and logging them is the worker's (`fetcher.worker`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from fetcher.config import FetcherConfig
from fetcher.decisions import Action, decide
from fetcher.extract import Extracted
from fetcher.extract_pool import (
    Extraction,
    ExtractionCrashed,
    ExtractionOverLimit,
    ExtractionPool,
    InProcessExtraction,
)
from fetcher.meta_refresh import refresh_target
from fetcher.page import Page, ms_since
from fetcher.politeness import BatchHolds
from fetcher.robots_step import RobotsStep
from fetcher.sink_backoff import SinkBackoff
from fetcher.source_cache import UNKNOWN, SourceCache
from frontier.chain_cookies import ChainCookies
from frontier.clock import utcnow
from frontier.errors import DatabaseUnavailable
from frontier.host_slots import Pace
from frontier.hosts import HostRepository
from frontier.queue import Claim, OutcomeKind
from frontier.safe_http import (
    REDIRECT_STATUSES,
    BlockedAddress,
    BodyTooLarge,
    FetchFailed,
    HttpError,
    PolicyBlocked,
    Refused,
    Response,
    SafeClient,
    TooManyRedirects,
    redirect_chain,
)
from frontier.sinks import ContentSink, DocumentRejected, RawDocument, SinkUnavailable
from frontier.sinks.duplicates import DuplicateContent
from frontier.urls import InvalidURL, request_spelling, same_identity, url_hash, url_host

log = logging.getLogger(__name__)
RECENT_CONTENT = 100_000  # content hashes this process remembers storing (about 15 MB)
NOT_EXTRACTED = Extraction(Extracted(), None, None, 0, 0)  # extraction off (benchmarks)
MAX_INLINE_HOPS = 5  # redirects and meta refreshes to the same identity, in all, per fetch


class BatchPipeline:
    def __init__(
        self,
        *,
        client: SafeClient,
        sink: ContentSink,
        config: FetcherConfig,
        hosts: HostRepository,
        sources: SourceCache,
        duplicates: DuplicateContent,
        robots: RobotsStep,
        worker_id: str,
        sink_backoff: SinkBackoff,
        extraction: ExtractionPool | InProcessExtraction | None = None,
    ) -> None:
        self.client = client
        self.extraction = extraction or InProcessExtraction()
        self.sink = sink
        self.config = config
        self.hosts = hosts
        self.sources = sources
        self.duplicates = duplicates
        self.robots = robots
        self.worker_id = worker_id
        self.sink_backoff = sink_backoff
        # content_hash -> the URL this process stored it under, newest last. The database
        # check below sees only completed URLs; two batches in flight at once with the same
        # body would both pass it. Bounded: older ones are completed and found there.
        self._recent: OrderedDict[str, str] = OrderedDict()
        # The same for canonical identities this process stored a variant's document
        # under (canonical url_hash -> the variant's URL): another variant in flight is
        # a duplicate of it.
        self._recent_canonicals: OrderedDict[str, str] = OrderedDict()

    # -- fetch ----------------------------------------------------------------------------

    async def fetch(self, claims: Sequence[Claim], *, now: datetime | None = None) -> list[Page]:
        """A page per claim; each either has its outcome or was fetched. Every host the
        batch held is given back by the time this returns."""
        hosts = sorted({c.host for c in claims})
        context = await self.hosts.context(hosts, now=now)
        holds = BatchHolds(self.hosts, self.worker_id, context, now=now)
        try:
            infos = await self.sources.get_many(c.source_id for c in claims)
            pages = [
                Page(c, infos.get(c.source_id, UNKNOWN) if c.source_id else UNKNOWN) for c in claims
            ]
            for page in pages:
                if page.source.fetchprotection <= 0:
                    page.end(
                        OutcomeKind.BLOCKED_BY_POLICY, error="the source's fetchprotection is 0"
                    )
            waiting = [p for p in pages if p.outcome is None]
            await self.robots.check(waiting, context, holds, now=now)
            await asyncio.gather(
                *(self._fetch_page(p, holds, now) for p in waiting if p.outcome is None)
            )
        finally:
            await asyncio.shield(holds.release_all())
        return pages

    async def _fetch_page(self, page: Page, holds: BatchHolds, now: datetime | None) -> None:
        started = time.monotonic()
        host = page.claim.host
        try:
            try:
                response, elsewhere = await self._follow(page, holds.paces[host])
            finally:
                await asyncio.shield(holds.release(host))  # every answer is in
        except BodyTooLarge as exc:
            page.end(OutcomeKind.UNSUPPORTED_CONTENT, error=str(exc))
        except (BlockedAddress, PolicyBlocked) as exc:
            page.end(OutcomeKind.BLOCKED_BY_POLICY, error=str(exc))
        except Refused as exc:
            page.end(OutcomeKind.RETRY, error=str(exc))
        except (FetchFailed, HttpError) as exc:
            page.end(OutcomeKind.RETRY, error=str(exc))
        else:
            if response.url != page.claim.request_url:
                page.fetch_url = response.url  # the server's spelling, for the next visit
            if elsewhere is not None:
                page.end(OutcomeKind.REDIRECT, http_status=response.status, redirect_to=elsewhere)
            else:
                await self._on_response(page, response.status, response.headers, response.body, now)
        page.elapsed_ms = ms_since(started)

    async def _follow(self, page: Page, pace: Pace) -> tuple[Response, str | None]:
        """Request the claim's spelling, following the redirects and near-empty meta
        refreshes that stay on its identity inline (at most MAX_INLINE_HOPS in all), with
        one cookie jar for the chain. Each hop is a request of its own and waits the
        host's delay after the previous answer (`pace`), holding the host meanwhile: going
        back to the queue instead would lose the chain's cookies (a consent wall's) and
        cost the hop a claim. Returns the last response and, when it sends the page to
        another identity (which goes through the frontier), that target."""
        claim = page.claim
        url, etag, last_modified = claim.request_url, claim.etag, claim.last_modified
        jar = ChainCookies()
        hops = 0
        chain: list[str] = []  # every URL requested, for the error of a loop

        def same(target: str) -> bool:
            return same_identity(target, claim.url)

        while True:
            response = await self.client.get(
                url,
                fetchprotection=page.source.fetchprotection,
                etag=etag,
                last_modified=last_modified,
                follow_if=same,
                max_redirects=MAX_INLINE_HOPS - hops,
                cookies=jar,
                pace=pace,
            )
            hops += len(response.history)
            chain += [u for _, u in response.history] + [response.url]
            if response.status in REDIRECT_STATUSES:
                location = response.headers.get("Location")
                return response, _resolved(location, response.url) if location else None
            if not 200 <= response.status < 300:
                return response, None
            target = refresh_target(
                response.body, response.headers.get("Content-Type"), response.url
            )
            if target is None:
                return response, None
            if not same(target):
                return response, target
            if hops >= MAX_INLINE_HOPS:
                raise TooManyRedirects(
                    f"more than {MAX_INLINE_HOPS} redirects: {redirect_chain(chain, target)}"
                )
            hops += 1
            url, etag, last_modified = target, None, None

    async def _on_response(
        self,
        page: Page,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
        now: datetime | None = None,
    ) -> None:
        decision = decide(status, headers, body, now)
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
        claim = page.claim
        if self.config.extract:
            try:
                extraction = await self.extraction.extract(
                    body, content_type, claim.url, page.source.selectors, claim.discovery_meta
                )
            except ExtractionCrashed as exc:  # a page that kills the parser's process
                log.error("extraction crashed for %s: %s", claim.url, exc)
                page.end(OutcomeKind.FAILED, http_status=status, error=f"extraction crashed: {exc}")
                return
            except ExtractionOverLimit as exc:  # a page costlier than its limits: stopped
                log.warning("extraction stopped for %s: %s", claim.url, exc)
                page.end(OutcomeKind.FAILED, http_status=status, error=f"extraction failed: {exc}")
                return
            except Exception as exc:  # extraction must never lose the claim
                log.exception("extraction failed for %s", claim.url)
                page.end(OutcomeKind.FAILED, http_status=status, error=f"extraction failed: {exc}")
                return
            page.canonical = extraction.canonical
        else:
            extraction = NOT_EXTRACTED
        extracted = extraction.extracted
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
        )
        page.end(
            OutcomeKind.FETCHED,
            http_status=status,
            content_hash=extraction.content_hash,
            etag=get("ETag"),
            last_modified=get("Last-Modified"),
        )

    # -- store ----------------------------------------------------------------------------

    async def store(self, pages: list[Page]) -> None:
        """Store the documents of the pages fetched; safe to repeat (the sink is
        idempotent). Raises DatabaseUnavailable when the database is down."""
        _drop_unchanged(pages)
        stored = [p for p in pages if p.document is not None]
        await self._by_canonical(stored)
        await self._drop_duplicates([p for p in stored if p.document is not None])
        stored = [p for p in stored if p.document is not None]
        if stored:
            await self._write(stored)
        moved = [
            p.document
            for p in stored
            if p.document is not None
            and p.document.url_hash != p.claim.url_hash
            and p.outcome is not None
            and p.outcome.kind is OutcomeKind.DUPLICATE_CONTENT
        ]
        if moved:
            await self.duplicates.record_canonicals(moved)

    async def _by_canonical(self, pages: list[Page]) -> None:
        """One article, one document (docs/duplicates.md): a page naming a
        trusted canonical other than itself is a variant. When the canonical is already
        fetched (or stored by this batch or a recent one of this process), the variant is
        `duplicate_content` with `final_url` the canonical and nothing is written; else
        its document is stored under the canonical's identity, the canonical is recorded
        as fetched after the write (so it is not fetched again), and the variant ends
        `duplicate_content` pointing at it. A canonical that is `dead` or `failed` is not
        trusted. Two processes storing variants of one canonical at once write the same
        document id: the sink keeps one."""
        variants = [
            p
            for p in pages
            if p.canonical is not None
            and p.document is not None
            and p.document.url_hash == p.claim.url_hash  # not moved by an earlier try
        ]
        if not variants:
            return
        keys = {url_hash(p.canonical): p.canonical for p in variants if p.canonical}
        statuses = await self.duplicates.statuses(list(keys))
        # Identities this batch stores under their own URL: a variant of one of them
        # must not write a second document with the same id in the same write.
        taken = {p.claim.url_hash for p in pages if p.canonical is None}
        for page in variants:
            assert page.canonical is not None and page.document is not None
            key = url_hash(page.canonical)
            if statuses.get(key) in ("dead", "failed"):
                # A canonical that answers with an error (or redirects elsewhere) is not
                # the article's URL: the page keeps its own (Google ignores such too).
                page.canonical = None
                taken.add(page.claim.url_hash)
                continue
            earlier = self._recent_canonicals.get(key)
            if (
                statuses.get(key) == "fetched"
                or key in taken
                or (earlier is not None and earlier != page.claim.url)
            ):
                _duplicate(page, page.canonical, final_url=page.canonical)
                continue
            taken.add(key)
            # By the variant that stores it: that one fetched again (its write failed and
            # it was retried) stores it again.
            self._recent_canonicals[key] = page.claim.url
            self._recent_canonicals.move_to_end(key)
            page.document = replace(
                page.document,
                url=page.canonical,
                url_hash=key,
                host=url_host(page.canonical),
                final_url=page.claim.url,
            )
            assert page.outcome is not None
            page.outcome = replace(
                page.outcome,
                kind=OutcomeKind.DUPLICATE_CONTENT,
                final_url=page.canonical,
                error=f"stored as its canonical {page.canonical}",
            )
        while len(self._recent_canonicals) > RECENT_CONTENT:
            self._recent_canonicals.popitem(last=False)

    async def _drop_duplicates(self, pages: list[Page]) -> None:
        seen: dict[str, str] = {}
        pairs = []
        for page in pages:
            assert page.document is not None
            digest = page.document.content_hash
            if digest is None:
                continue
            if digest in seen:
                _duplicate(page, seen[digest])
                continue
            earlier = self._recent.get(digest)
            if earlier is not None and earlier != page.document.url:
                _duplicate(page, earlier)  # stored by a batch still in flight, or just done
                continue
            seen[digest] = page.document.url
            pairs.append((page.document.url_hash, digest))
        # Claimed before the first await, so a concurrent batch sees them.
        for digest, url in seen.items():
            self._recent[digest] = url
            self._recent.move_to_end(digest)
        while len(self._recent) > RECENT_CONTENT:
            self._recent.popitem(last=False)
        originals = await self.duplicates.indexed_elsewhere(pairs)
        for page in pages:
            if page.document is not None and page.document.url_hash in originals:
                _duplicate(page, originals[page.document.url_hash])

    async def _write(self, pages: list[Page]) -> None:
        documents = [p.document for p in pages if p.document is not None]
        try:
            await self.sink.write(documents)
        except DatabaseUnavailable:
            raise  # the PostgreSQL sink's database is down: the worker holds the pages
        except DocumentRejected as exc:
            refused = set(exc.url_hashes)
            for page in pages:
                if page.document is not None and page.document.url_hash in refused:
                    assert page.outcome is not None
                    page.outcome = replace(
                        page.outcome,
                        kind=OutcomeKind.FAILED,
                        error=f"sink refused the document: {exc}",
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


def _resolved(location: str, base: str) -> str:
    """A redirect target as the server spelt it, resolved against the URL that answered;
    an unusable one is passed on as it is (the queue ends the URL with the reason)."""
    try:
        return request_spelling(location, base)
    except InvalidURL:
        return location


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


def _duplicate(page: Page, original: str, *, final_url: str | None = None) -> None:
    assert page.outcome is not None
    page.outcome = replace(
        page.outcome,
        kind=OutcomeKind.DUPLICATE_CONTENT,
        error=f"same content as {original}",
        final_url=final_url or page.outcome.final_url,
    )
    page.document = None
