"""The fetch worker: claim a batch of URLs (one per host), settle robots.txt for their
hosts, start each request inside the politeness slot its claim reserved, fetch, decide the
outcome, extract, store in the sink, complete the batch, and log one fetch_log row per page.

`Fetcher.run_once()` does one batch and is what tests call; `Fetcher.run()` is the thin
loop around it (claims while slots are free, LISTEN/NOTIFY wake-up with a one-second poll
as the fallback, lease renewal, the reaper and housekeeping, graceful stop).

When PostgreSQL goes away (`DatabaseUnavailable`), every loop waits with a capped
exponential backoff (`db.outage.backoff()`) instead of its tick, the process logs one line
when it goes and one when it is back, and the LISTEN connection is opened again. A batch
already fetched keeps its pages: storing and completing them is retried while its leases
still hold (half a lease from the first failure), and a batch that cannot finish is
released once the database answers; past that, its leases expire and the reaper returns
its URLs. Completion is guarded by claimant and state, so running it again is safe.

Politeness across processes: the claim moves the host's `next_allowed_at` to claim time +
delay, which reserves the slot [claim time, claim time + delay) for this worker. A request
may only start inside that slot (or while this worker holds the host's lease, taken while
it fetches the host's robots.txt): right before sending, one batched statement
(`HostRepository.begin_requests`) checks that and moves `next_allowed_at` to the actual
start + delay + a small margin. A worker that is late (its slot has passed, so another
worker may have claimed the host since) does not send; the URL goes back to pending
untried. So the gap between two requests to a host, as the server sees them, never falls
below its delay, however late a worker starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TypeVar

from fetcher.config import FetcherConfig
from fetcher.decisions import Action, decide, decode_html
from fetcher.extract import Extracted, extract
from fetcher.robots import ROBOTS_MAX_BYTES, RobotsRules, interpret, product_token
from fetcher.source_cache import UNKNOWN, SourceCache, SourceInfo
from frontier.backoff import retry_delay
from frontier.clock import utcnow
from frontier.db import Database
from frontier.errors import DatabaseUnavailable
from frontier.fetch_log import FetchLogRepository, LogEntry
from frontier.hosts import HostContext, HostRepository, RobotsRecord
from frontier.queue import Claim, Outcome, OutcomeKind, QueuePolicy, QueueRepository
from frontier.reconnect import is_connection_loss
from frontier.safe_http import (
    BlockedAddress,
    BodyTooLarge,
    FetchFailed,
    HttpError,
    PolicyBlocked,
    Refused,
    SafeClient,
    TooManyRedirects,
)
from frontier.sinks import ContentSink, DocumentRejected, RawDocument, SinkUnavailable
from frontier.sinks.duplicates import DuplicateContent
from frontier.sources import SourceRepository
from frontier.states import FetchKind, LogOutcome, RobotsStatus
from frontier.stats import StatsRepository

log = logging.getLogger(__name__)

NOTIFY_CHANNEL = "frontier_submitted"
LEASE_BUSY_RETRY_S = 5.0  # another worker is fetching the host's robots.txt
ROBOTS_CACHE_HOSTS = 10_000
T = TypeVar("T")

LOG_OUTCOMES = {
    OutcomeKind.FETCHED: LogOutcome.OK,
    OutcomeKind.NOT_MODIFIED: LogOutcome.NOT_MODIFIED,
    OutcomeKind.REDIRECT: LogOutcome.REDIRECT,
    OutcomeKind.NOT_FOUND: LogOutcome.NOT_FOUND,
    OutcomeKind.GONE: LogOutcome.GONE,
    OutcomeKind.ROBOTS_BLOCKED: LogOutcome.BLOCKED,
    OutcomeKind.DUPLICATE_CONTENT: LogOutcome.DUPLICATE,
    OutcomeKind.UNSUPPORTED_CONTENT: LogOutcome.UNSUPPORTED,
    OutcomeKind.BLOCKED_BY_POLICY: LogOutcome.REFUSED,
    OutcomeKind.RETRY: LogOutcome.FAILED,
    OutcomeKind.RATE_LIMITED: LogOutcome.RATE_LIMITED,
    OutcomeKind.DEFERRED: LogOutcome.DEFERRED,
    OutcomeKind.FAILED: LogOutcome.FAILED,
}


@dataclass(slots=True)
class _Page:
    """One claim on its way through the batch."""

    claim: Claim
    source: SourceInfo
    outcome: Outcome | None = None
    elapsed_ms: int | None = None
    document: RawDocument | None = None


@dataclass(slots=True)
class RunSummary:
    batches: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    released: int = 0

    @property
    def pages(self) -> int:
        return sum(self.outcomes.values())


class Fetcher:
    def __init__(
        self,
        db: Database,
        client: SafeClient,
        sink: ContentSink,
        config: FetcherConfig,
        policy: QueuePolicy | None = None,
    ) -> None:
        self.db = db
        self.client = client
        self.sink = sink
        self.config = config
        self.worker_id = config.worker_id
        self.queue = QueueRepository(db, policy)
        self.hosts = HostRepository(db)
        self.fetch_log = FetchLogRepository(db)
        self.duplicates = DuplicateContent(db)
        self.sources = SourceCache(SourceRepository(db))
        self.stats = StatsRepository(db)
        self.summary = RunSummary()
        self._token = product_token(config.user_agent)
        self._rules: dict[str, tuple[datetime | None, RobotsRules]] = {}
        self._in_flight: dict[str, Claim] = {}
        self._sink_failures = 0  # sink outages in a row (see `_sink_wait`)
        self._sink_delay = 0.0
        self._sink_retry_at = 0.0  # time.monotonic() when the current sink wait runs out

    # -- one batch ------------------------------------------------------------------------

    async def run_once(self, limit: int | None = None) -> int:
        """Claim up to `limit` URLs (default: the claim batch), process them to completion;
        returns how many were claimed."""
        claims = await self.queue.claim(self.worker_id, limit or self.config.claim_batch)
        if claims:
            await self.process(claims)
        return len(claims)

    async def process(self, claims: Sequence[Claim]) -> None:
        """Fetch claimed URLs and complete every one of them. If this is cancelled (a stop
        past its deadline) or fails, claims not completed are released untried."""
        for claim in claims:
            self._in_flight[claim.url_hash] = claim
        try:
            pages = await self._handle(claims)
            await self._finish(pages)
        except BaseException:
            left = [c for c in claims if c.url_hash in self._in_flight]
            if left:
                await asyncio.shield(self._release(left, wait_for_database=True))
            raise
        finally:
            for claim in claims:
                self._in_flight.pop(claim.url_hash, None)
        self.summary.batches += 1

    async def _release(self, claims: Sequence[Claim], *, wait_for_database: bool = False) -> None:
        """Give claims back untried; with `wait_for_database`, ride out an outage while
        their leases hold (a stopping process does not wait)."""
        try:
            if wait_for_database:
                result = await self._while_leased(
                    lambda: self.queue.release(self.worker_id, claims))  # fmt: skip
            else:
                result = await self.queue.release(self.worker_id, claims)
            self.summary.released += len(result.applied)
        except Exception as exc:  # the reaper returns them after lease expiry
            log.error("could not release %d claims (%s); their leases will expire",
                      len(claims), exc)  # fmt: skip
        for claim in claims:
            self._in_flight.pop(claim.url_hash, None)

    async def _handle(self, claims: Sequence[Claim]) -> list[_Page]:
        hosts = sorted({c.host for c in claims})
        context = await self.hosts.context(hosts)
        infos = await self.sources.get_many(c.source_id for c in claims)
        pages = [_Page(c, infos.get(c.source_id, UNKNOWN) if c.source_id else UNKNOWN)
                 for c in claims]  # fmt: skip
        for page in pages:
            if page.source.fetchprotection <= 0:
                self._set(page, OutcomeKind.BLOCKED_BY_POLICY,
                          error="the source's fetchprotection is 0")  # fmt: skip
        waiting = [p for p in pages if p.outcome is None]
        robots_hosts = {p.claim.host for p in waiting if context[p.claim.host].robots_needed()}
        not_before = await self._settle_robots(waiting, context, robots_hosts)
        to_fetch: list[_Page] = []
        for page in waiting:
            if page.outcome is None:
                self._apply_robots(page, context[page.claim.host])
            if page.outcome is None:
                to_fetch.append(page)
        # Leases taken for robots.txt on hosts that will get no page request now.
        idle_leases = {h for h in not_before if not any(p.claim.host == h for p in to_fetch)}
        await self.hosts.release_leases(sorted(idle_leases), self.worker_id)
        fresh = [p for p in to_fetch if p.claim.host not in not_before]
        after_robots = [p for p in to_fetch if p.claim.host in not_before]
        await asyncio.gather(
            self._fetch_group(fresh, context, leased=False),
            self._fetch_group(after_robots, context, leased=True,
                              wait_until=max((not_before[p.claim.host] for p in after_robots),
                                             default=0.0)),
        )  # fmt: skip
        return pages

    def _set(self, page: _Page, kind: OutcomeKind, **values: object) -> None:
        page.outcome = Outcome(page.claim, kind, **values)  # type: ignore[arg-type]

    # -- robots.txt -----------------------------------------------------------------------

    async def _settle_robots(
        self, pages: Sequence[_Page], context: dict[str, HostContext], hosts: set[str]
    ) -> dict[str, float]:
        """Fetch robots.txt for `hosts` under a host lease; returns, per host fetched, the
        monotonic time before which its first page request must not start."""
        if not hosts:
            return {}
        leased = await self.hosts.take_leases(sorted(hosts), self.worker_id,
                                              self.config.robots_lease_s)  # fmt: skip
        for page in pages:
            if page.claim.host in hosts and page.claim.host not in leased:
                self._set(page, OutcomeKind.DEFERRED, retry_after_s=LEASE_BUSY_RETRY_S,
                          error="robots.txt is being fetched by another worker")  # fmt: skip
        schemes = {p.claim.host: p.claim.url.split("://", 1)[0] for p in pages}
        started = {host: time.monotonic() for host in leased}
        results = await asyncio.gather(
            *(self._fetch_robots(schemes[host], host) for host in sorted(leased))
        )
        records = [r for r, _ in results if r is not None]
        blocked = {host for (r, _), host in zip(results, sorted(leased), strict=True)
                   if r is None}  # fmt: skip
        stored = await self.hosts.store_robots(
            records, ttl_hours=self.config.robots_ttl_hours,
            retry_base_s=self.config.robots_retry_s,
        )  # fmt: skip
        await self.fetch_log.record([entry for _, entry in results])
        not_before: dict[str, float] = {}
        for record in records:
            ctx = context[record.host]
            saved = stored.get(record.host)
            db_now = saved.now if saved else ctx.now
            context[record.host] = replace(
                ctx, robots_status=record.status, robots_txt=record.robots_txt,
                robots_fetched_at=db_now, robots_retry_at=saved.retry_at if saved else None,
                delay_ms=record.crawl_delay_ms if record.crawl_delay_ms is not None
                else ctx.delay_ms, now=db_now,
            )  # fmt: skip
            delay = context[record.host].delay_ms
            margin = min(delay // 10, self.config.politeness_margin_ms)
            not_before[record.host] = started[record.host] + (delay + margin) / 1000
        for page in pages:
            if page.claim.host in blocked and page.outcome is None:
                self._set(page, OutcomeKind.BLOCKED_BY_POLICY,
                          error="robots.txt refused: the host's address is not public")  # fmt: skip
        for host in blocked:
            not_before[host] = 0.0  # lease to give back; no page request follows
        return not_before

    async def _fetch_robots(self, scheme: str, host: str) -> tuple[RobotsRecord | None, LogEntry]:
        url = f"{scheme}://{host}/robots.txt"
        started = time.monotonic()
        status: int | None = None
        body: bytes | None = None
        error: str | None = None
        try:
            response = await self.client.get(
                url, fetchprotection=1, follow_redirects=True,
                max_body_bytes=ROBOTS_MAX_BYTES, truncate=True,
            )  # fmt: skip
            status, body = response.status, response.body
        except BlockedAddress as exc:
            entry = LogEntry(FetchKind.ROBOTS, None, url, LogOutcome.REFUSED, error=str(exc),
                             elapsed_ms=_ms_since(started))  # fmt: skip
            return None, entry
        except TooManyRedirects as exc:
            status, error = 310, str(exc)  # RFC 9309: past 5 redirects, "unavailable"
        except HttpError as exc:
            error = str(exc)
        record = interpret(
            host, token=self._token, http_status=status, body=body, error=error,
            max_crawl_delay_ms=self.config.robots_max_crawl_delay_ms,
        )  # fmt: skip
        if status == 310:
            record = replace(record, http_status=None)
        outcome = (
            LogOutcome.FAILED
            if record.status is RobotsStatus.DISALLOW_ALL
            else (LogOutcome.OK if record.status is RobotsStatus.OK else LogOutcome.NOT_FOUND)
        )
        entry = LogEntry(FetchKind.ROBOTS, None, url, outcome, http_status=record.http_status,
                         elapsed_ms=_ms_since(started), error=record.error)  # fmt: skip
        log.info("robots host=%s status=%s http=%s", host, record.status, record.http_status)
        return record, entry

    def _rules_for(self, ctx: HostContext) -> RobotsRules:
        cached = self._rules.get(ctx.host)
        if cached is not None and cached[0] == ctx.robots_fetched_at and \
                cached[1].status is ctx.robots_status:  # fmt: skip
            return cached[1]
        rules = RobotsRules.of(ctx.robots_status, ctx.robots_txt)
        if len(self._rules) >= ROBOTS_CACHE_HOSTS:
            self._rules.pop(next(iter(self._rules)))
        self._rules[ctx.host] = (ctx.robots_fetched_at, rules)
        return rules

    def _apply_robots(self, page: _Page, ctx: HostContext) -> None:
        if ctx.robots_status is RobotsStatus.UNKNOWN:
            self._set(page, OutcomeKind.DEFERRED, retry_after_s=LEASE_BUSY_RETRY_S,
                      error="robots.txt not fetched yet")  # fmt: skip
            return
        if ctx.robots_status is RobotsStatus.DISALLOW_ALL:
            wait = (ctx.robots_retry_at - ctx.now).total_seconds() if ctx.robots_retry_at \
                else self.config.robots_retry_s  # fmt: skip
            self._set(
                page,
                OutcomeKind.DEFERRED,
                retry_after_s=max(wait, 1.0),
                error="robots.txt unavailable (5xx or unreachable): disallowed for now",
            )
            return
        if not self._rules_for(ctx).allows(page.claim.url, self._token):
            self._set(page, OutcomeKind.ROBOTS_BLOCKED, error="disallowed by robots.txt")

    # -- pages ----------------------------------------------------------------------------

    async def _fetch_group(
        self,
        pages: Sequence[_Page],
        context: dict[str, HostContext],
        *,
        leased: bool,
        wait_until: float = 0.0,
    ) -> None:
        if not pages:
            return
        pause = wait_until - time.monotonic()
        if pause > 0:
            await asyncio.sleep(pause)  # the robots.txt request counts against the delay
        lease_s = self.queue.policy.lease_seconds
        slots: list[tuple[str, datetime]] = []
        for page in pages:
            ctx = context[page.claim.host]
            if ctx.delay_ms == 0 and not leased:
                continue  # no delay to keep: no slot to check
            claimed_at = page.claim.lease_until - timedelta(seconds=lease_s)
            end = min(ctx.next_allowed_at, claimed_at + timedelta(milliseconds=ctx.delay_ms))
            slots.append((page.claim.host, end))
        go = await self.hosts.begin_requests(
            slots, self.worker_id, margin_ms=self.config.politeness_margin_ms
        )
        ready = []
        for page in pages:
            if go.get(page.claim.host, True):
                ready.append(page)
            else:
                self._set(page, OutcomeKind.DEFERRED, retry_after_s=0.0,
                          error="started after its politeness slot; not sent")  # fmt: skip
        await asyncio.gather(*(self._fetch_page(page) for page in ready))

    async def _fetch_page(self, page: _Page) -> None:
        claim = page.claim
        started = time.monotonic()
        try:
            response = await self.client.get(
                claim.url, fetchprotection=page.source.fetchprotection, etag=claim.etag,
                last_modified=claim.last_modified, follow_redirects=False,
            )  # fmt: skip
        except BodyTooLarge as exc:
            self._set(page, OutcomeKind.UNSUPPORTED_CONTENT, error=str(exc))
        except (BlockedAddress, PolicyBlocked) as exc:
            self._set(page, OutcomeKind.BLOCKED_BY_POLICY, error=str(exc))
        except Refused as exc:
            self._set(page, OutcomeKind.RETRY, error=str(exc))
        except (FetchFailed, HttpError) as exc:
            self._set(page, OutcomeKind.RETRY, error=str(exc))
        else:
            page.elapsed_ms = response.elapsed_ms
            await self._on_response(page, response.status, response.headers, response.body)
        if page.elapsed_ms is None:
            page.elapsed_ms = _ms_since(started)

    async def _on_response(
        self, page: _Page, status: int, headers: Mapping[str, str], body: bytes
    ) -> None:
        decision = decide(status, headers, body)
        if decision.action is Action.FINISH:
            self._set(
                page,
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
                extracted = await asyncio.to_thread(
                    _extract, body, content_type, claim.url, page.source.selectors,
                    claim.discovery_meta,
                )  # fmt: skip
            except Exception as exc:  # extraction must never lose the claim
                log.exception("extraction failed for %s", claim.url)
                self._set(page, OutcomeKind.FAILED, http_status=status,
                          error=f"extraction failed: {exc}")  # fmt: skip
                return
        else:
            extracted = Extracted()
        page.document = RawDocument(
            url_hash=claim.url_hash, url=claim.url, final_url=None, source_id=claim.source_id,
            source_name=page.source.name, host=claim.host, origin=str(claim.origin),
            title=extracted.title, body=extracted.body, summary=extracted.summary,
            author=extracted.author, published_at=extracted.published_at,
            image_url=extracted.image_url, language=extracted.language,
            content_hash=extracted.content_hash, word_count=extracted.word_count,
            extractor=extracted.extractor, http_status=status, fetched_at=utcnow(),
        )  # fmt: skip
        self._set(page, OutcomeKind.FETCHED, http_status=status,
                  content_hash=extracted.content_hash, etag=get("ETag"),
                  last_modified=get("Last-Modified"))  # fmt: skip

    # -- store, complete, log ---------------------------------------------------------------

    async def _finish(self, pages: list[_Page]) -> None:
        # The pages are fetched: if the database is down, hold them and try again rather
        # than throw the work away (both steps are safe to repeat).
        await self._while_leased(lambda: self._store_fetched(pages))
        outcomes = [p.outcome for p in pages if p.outcome is not None]
        missing = [p.claim for p in pages if p.outcome is None]
        outcomes += [Outcome(c, OutcomeKind.DEFERRED, error="no outcome") for c in missing]
        result = await self._while_leased(lambda: self.queue.complete(self.worker_id, outcomes))
        refused = set(result.refused)
        for claim_hash in refused:
            log.warning("completion refused for %s (lease lost to the reaper?)", claim_hash)
        for page in pages:
            self._in_flight.pop(page.claim.url_hash, None)
        entries = []
        for page in pages:
            outcome = page.outcome
            if outcome is None or page.claim.url_hash in refused:
                continue  # a refused completion did not happen: whoever holds it now logs it
            self.summary.outcomes[str(outcome.kind)] += 1
            entries.append(LogEntry(
                FetchKind.PAGE, page.claim.source_id, page.claim.url, LOG_OUTCOMES[outcome.kind],
                http_status=outcome.http_status, elapsed_ms=page.elapsed_ms, error=outcome.error,
            ))  # fmt: skip
            log.info("page url=%s outcome=%s http=%s ms=%s", page.claim.url, outcome.kind,
                     outcome.http_status, page.elapsed_ms)  # fmt: skip
        try:
            await self.fetch_log.record(entries)
        except Exception as exc:  # the log is observability: never fail the batch for it
            log.error("could not write %d fetch_log rows: %s", len(entries), exc)

    async def _store_fetched(self, pages: list[_Page]) -> None:
        stored = [p for p in pages if p.document is not None]
        await self._drop_duplicates(stored)
        stored = [p for p in stored if p.document is not None]
        if stored:
            await self._store(stored)

    async def _while_leased(self, step: Callable[[], Awaitable[T]]) -> T:
        """Run `step`, riding out a database outage for up to half a lease from the first
        failure: lease renewal runs every third of a lease, so the claims are still ours."""
        return await self.db.outage.ride_out(step, self.queue.policy.lease_seconds / 2)

    async def _drop_duplicates(self, pages: list[_Page]) -> None:
        seen: dict[str, str] = {}
        pairs = []
        for page in pages:
            assert page.document is not None
            digest = page.document.content_hash
            if digest is None:
                continue
            if digest in seen:
                self._duplicate(page, seen[digest])
                continue
            seen[digest] = page.claim.url
            pairs.append((page.claim.url_hash, digest))
        originals = await self.duplicates.indexed_elsewhere(pairs)
        for page in pages:
            if page.document is not None and page.claim.url_hash in originals:
                self._duplicate(page, originals[page.claim.url_hash])

    def _duplicate(self, page: _Page, original: str) -> None:
        assert page.outcome is not None
        page.outcome = replace(page.outcome, kind=OutcomeKind.DUPLICATE_CONTENT,
                               error=f"same content as {original}")  # fmt: skip
        page.document = None

    async def _store(self, pages: list[_Page]) -> None:
        documents = [p.document for p in pages if p.document is not None]
        try:
            await self.sink.write(documents)
        except DatabaseUnavailable:
            raise  # the PostgreSQL sink's database is down: `_finish` holds the pages
        except DocumentRejected as exc:
            refused = set(exc.url_hashes)
            for page in pages:
                if page.claim.url_hash in refused:
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
            wait = self._sink_wait()
            what = "unavailable" if isinstance(exc, SinkUnavailable) else "failed"
            log.error("sink %s %s (%s); %d URLs back to pending and claiming paused for %.0fs",
                      self.sink.name, what, exc, len(pages), wait,
                      exc_info=what == "failed")  # fmt: skip
            for page in pages:
                self._set(page, OutcomeKind.DEFERRED, retry_after_s=wait,
                          error=f"sink {what}: {exc}")  # fmt: skip
            return
        self._sink_failures, self._sink_retry_at = 0, 0.0

    def claims_paused_for(self, now: float | None = None) -> float:
        """Seconds until the claim loop may claim again: while the sink is known to be down,
        pages fetched could not be stored, and fetching them again once it is back would
        spend the sites' politeness twice. 0 when it may claim. `now`: time.monotonic()."""
        now = time.monotonic() if now is None else now
        return max(0.0, self._sink_retry_at - now)

    def _sink_wait(self, now: float | None = None) -> float:
        """How long URLs wait while the sink is down: `sink_retry_s`, doubled per failure
        *after the previous wait ran out* (capped), not per failed batch: the batches that
        fail together in one outage would otherwise double it many times over, and a
        one-minute outage would park URLs for the cap (an hour). `now`: time.monotonic()."""
        now = time.monotonic() if now is None else now
        if now >= self._sink_retry_at:
            self._sink_failures += 1
            self._sink_delay = retry_delay(
                self._sink_failures,
                base_s=self.config.sink_retry_s,
                cap_s=self.config.sink_retry_max_s,
                jitter=0.0,
            )
            self._sink_retry_at = now + self._sink_delay
        return self._sink_delay

    # -- the loop ---------------------------------------------------------------------------

    async def run(
        self, *, until_idle: bool = False, stop: asyncio.Event | None = None
    ) -> RunSummary:
        """Fetch until `stop` is set (or, with `until_idle`, until nothing is due and nothing
        is in flight). On stop: no more claims; in-flight batches get `shutdown_s` to finish,
        then are cancelled and their claims released."""
        stop = stop or asyncio.Event()
        wake = asyncio.Event()
        tasks: set[asyncio.Task[None]] = set()
        helpers = [asyncio.create_task(self._renew_leases(stop)),
                   asyncio.create_task(self._maintain(stop)),
                   asyncio.create_task(self._listen(wake, stop))]  # fmt: skip
        backoff = self.db.outage.backoff()
        try:
            while not stop.is_set():
                paused_s = self.claims_paused_for()
                if paused_s > 0:
                    await _first_of([*tasks], [stop], paused_s)
                    continue
                free = self.config.concurrency - len(self._in_flight)
                claimed = 0
                if free > 0:
                    try:
                        claims = await self.queue.claim(
                            self.worker_id, min(free, self.config.claim_batch)
                        )
                    except DatabaseUnavailable as exc:  # wait, then claim again
                        delay = backoff.next_delay()
                        self.db.outage.report(exc, delay)
                        await _first_of([], [stop], delay)
                        continue
                    except Exception as exc:  # a failing statement: wait a tick, try again
                        log.error("claim failed: %s", exc)
                        claims = []
                    else:
                        backoff.reset()
                    claimed = len(claims)
                    if claims:
                        task = asyncio.create_task(self._guarded(claims))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                        continue
                if until_idle and not tasks and not claimed and await self._idle():
                    break
                timeout = await self._idle_wait() if not claimed else self.config.idle_poll_s
                wake.clear()
                await _first_of([*tasks], [wake, stop], timeout)
        finally:
            await self._shutdown(tasks)
            for helper in helpers:
                helper.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)
        return self.summary

    async def _guarded(self, claims: Sequence[Claim]) -> None:
        try:
            await self.process(claims)
        except asyncio.CancelledError:
            raise
        except DatabaseUnavailable as exc:  # no traceback: the outage is logged once
            log.warning("a batch of %d claims could not finish (%s)", len(claims), exc)
        except Exception:
            log.exception("a batch of %d claims failed; released", len(claims))

    async def _idle(self) -> bool:
        try:
            return not await self.hosts.due_now() and await self.queue.in_flight() == 0
        except DatabaseUnavailable:
            return False  # the claim loop reports the outage and backs off
        except Exception as exc:
            log.error("idle check failed: %s", exc)
            return False

    async def _idle_wait(self) -> float:
        """Sleep until the next host becomes ready, at most the poll interval."""
        try:
            due = await self.queue.next_due()
        except Exception:
            return self.config.idle_poll_s
        if due is None:
            return self.config.idle_poll_s
        return min(max((due - utcnow()).total_seconds(), 0.01), self.config.idle_poll_s)

    async def _shutdown(self, tasks: set[asyncio.Task[None]]) -> None:
        if tasks:
            _done, pending = await asyncio.wait(set(tasks), timeout=self.config.shutdown_s)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        left = list(self._in_flight.values())
        if left:
            await self._release(left)

    async def _renew_leases(self, stop: asyncio.Event) -> None:
        every = max(self.queue.policy.lease_seconds / 3, 1.0)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)
            hashes = list(self._in_flight)
            if hashes:
                try:
                    await self.queue.renew(self.worker_id, hashes)
                except DatabaseUnavailable as exc:  # next round renews them
                    self.db.outage.report(exc, every)
                except Exception as exc:
                    log.error("lease renewal failed: %s", exc)

    async def _maintain(self, stop: asyncio.Event) -> None:
        """The reaper and counter compaction every `maintenance_every_s`; fetch_log
        pruning about hourly."""
        last_prune = 0.0
        while not stop.is_set():
            try:
                reaped = await self.queue.reap()
                if reaped.returned or reaped.dead or reaped.host_leases:
                    log.info("reaper: %s", reaped)
                await self.stats.compact()
                if time.monotonic() - last_prune > 3600:
                    await self.fetch_log.prune(self.config.fetch_log_retention)
                    last_prune = time.monotonic()
            except DatabaseUnavailable as exc:  # the next round catches up
                self.db.outage.report(exc, self.config.maintenance_every_s)
            except Exception as exc:
                log.error("maintenance failed: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.config.maintenance_every_s)

    async def _listen(self, wake: asyncio.Event, stop: asyncio.Event) -> None:
        """LISTEN on frontier_submitted on a connection of its own until `stop`; when the
        server drops it, LISTEN again (with backoff) and wake the claim loop, since
        notifications sent meanwhile are lost. Without it, the claim loop still polls."""
        backoff = self.db.outage.backoff()

        def notified(*_args: object) -> None:
            wake.set()

        while not stop.is_set():
            lost = asyncio.Event()

            def terminated(*_args: object) -> None:
                lost.set()  # noqa: B023 - each connection gets its own callback and event

            try:
                async with self.db.connection() as conn:
                    conn.add_termination_listener(terminated)
                    try:
                        await conn.add_listener(NOTIFY_CHANNEL, notified)
                        if backoff.attempts:
                            log.info("LISTEN %s again", NOTIFY_CHANNEL)
                            wake.set()
                        backoff.reset()
                        await _first_of([], [lost, stop], None)
                    finally:  # a dead connection is already back in the pool: let go
                        with contextlib.suppress(Exception):
                            conn.remove_termination_listener(terminated)
                            if not conn.is_closed():
                                await conn.remove_listener(NOTIFY_CHANNEL, notified)
                if stop.is_set():
                    return
                raise DatabaseUnavailable("the LISTEN connection was closed by the server")
            except Exception as exc:
                delay = backoff.next_delay()
                if is_connection_loss(exc):
                    self.db.outage.report(exc, delay)
                else:
                    log.warning("LISTEN %s failed (%s); polling meanwhile, again in %.1f s",
                                NOTIFY_CHANNEL, exc, delay)  # fmt: skip
                await _first_of([], [stop], delay)


def _extract(
    body: bytes,
    content_type: str | None,
    url: str,
    selectors: dict[str, object] | None,
    meta: dict[str, object] | None,
) -> Extracted:
    html, _encoding = decode_html(body, content_type)
    return extract(html, url, selectors=selectors, discovery_meta=meta)


def _ms_since(started: float) -> int:
    return max(int((time.monotonic() - started) * 1000), 0)


async def _first_of(
    tasks: list[asyncio.Task[None]], events: list[asyncio.Event], timeout: float | None
) -> None:
    """Wait until a task ends, an event is set, or `timeout` passes."""
    waiters = [asyncio.create_task(e.wait()) for e in events]
    try:
        await asyncio.wait([*tasks, *waiters], timeout=timeout,
                           return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
    finally:
        for waiter in waiters:
            waiter.cancel()
