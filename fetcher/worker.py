"""`Fetcher`: one fetch worker. `run_once(now=...)` claims a batch of URLs (at most one
per host), runs it through the pipeline (`fetcher.pipeline`), completes every claim and
logs one fetch_log row per page; tests call it directly, with the clock pinned. `run()`
is the process: the claim loop (below), LISTEN (`frontier.listen`), lease renewal and
maintenance (`frontier.loops.run_every` around `renew_once` and `maintain_once`).

When PostgreSQL goes away (`DatabaseUnavailable`), every loop waits with a capped
exponential backoff (`db.outage.backoff()`) instead of its tick, the process logs one line
when it goes and one when it is back, and the LISTEN connection is opened again. A batch
already fetched keeps its pages: storing and completing them is retried while its leases
still hold (half a lease from the first failure), and a batch that cannot finish is
released once the database answers; past that, its leases expire and the reaper returns
its URLs. Completion is guarded by claimant and state, so running it again is safe.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from contextlib import aclosing
from datetime import datetime
from typing import TypeVar

from fetcher.archiving import ArchiveStep
from fetcher.config import FetcherConfig
from fetcher.extract_pool import ExtractionPool
from fetcher.extract_thread import InProcessExtraction
from fetcher.heartbeat import BEAT_EVERY_S, Heartbeat
from fetcher.page import LOG_OUTCOMES, Page
from fetcher.pipeline import BatchPipeline
from fetcher.render_step import RenderStep
from fetcher.robots_step import RobotsStep
from fetcher.sink_backoff import SinkBackoff
from fetcher.source_cache import SourceCache
from fetcher.summary import FetchSummary
from frontier.clock import utcnow
from frontier.coalesce import Together
from frontier.db import Database
from frontier.errors import DatabaseUnavailable
from frontier.fetch_log import FetchLogRepository, LogEntry
from frontier.hosts import HostRepository
from frontier.listen import first_of, listen
from frontier.loops import run_every
from frontier.outbox import OutboxWrites
from frontier.parse_pool import ParsePool
from frontier.politeness_key import KeyRepository
from frontier.queue import QueueRepository
from frontier.queue_values import Claim, Outcome, OutcomeKind, QueuePolicy
from frontier.safe_http.client import SafeClient
from frontier.sinks import Sink
from frontier.sinks.duplicates import DuplicateContent
from frontier.sinks.near_duplicates import NearDuplicates
from frontier.sources import SourceRepository
from frontier.states import FetchKind
from frontier.stats import StatsRepository
from frontier.versions import DocumentVersions

log = logging.getLogger(__name__)

PRUNE_EVERY_S = 3600.0  # fetch_log pruning, from the maintenance tick
# Claims a process holds in all, per slot of its concurrency: the pages being requested
# and extracted, and behind them those whose documents are being stored and completed.
# On a machine whose cores the database shares with the extraction, a group's store and
# completion can outlast the time the slots take to fill again; with room for only one
# such group (2) the claims then stop and the extraction workers wait. Room for three
# kept them fed better: bench.fetch's pool run made more pages a second on standard and
# small pages than with the bound at 2 (bench/RESULTS.md, twelfth session). Room for five
# (6): at 4 the claims still stopped a few times a second, every held claim waiting on one
# finish (traced: the workers then idle), and the pool run's cores were busier at 6 or 8
# than at 4, alike at 6 and 8 (bench/RESULTS.md, fourteenth session). The pages past
# extraction hold their documents (and, with the archive on, their responses until it is
# written): what they hold in all is bound too, to what the pages being requested can
# hold (`Fetcher.held_bytes_bound`), so servers that all send the largest body
# allowed cannot make them hold five times that.
HELD_PER_SLOT = 6
T = TypeVar("T")
_Wave = tuple[list[Page], FetchSummary, datetime | None]  # a batch's pages done, at `now`


class Fetcher:
    def __init__(
        self,
        db: Database,
        client: SafeClient,
        sink: Sink,
        config: FetcherConfig,
        policy: QueuePolicy | None = None,
        extraction: ExtractionPool | InProcessExtraction | None = None,
        parser: ParsePool | None = None,
        renderer: RenderStep | None = None,
        optional_sinks: Sequence[str] = (),
        outbox_payloads: bool = True,
    ) -> None:
        """`extraction`: where pages are parsed (default: a thread of this process);
        `parser`: where robots.txt is (default: a pool of its own, under `config.parse`);
        `renderer`: the browsers of the sources that render (None: none rendered; the
        caller closes it); `optional_sinks`: the names of the sinks each document fetched
        is put in the outbox for, with the completion of its URL (frontier.outbox);
        `outbox_payloads`: whether those rows hold the document (not when raw_content, a
        required sink, has it: frontier.sinks.configured)."""
        self.db = db
        self.optional_sinks = list(optional_sinks)
        self.outbox_payloads = outbox_payloads
        self.config = config
        self.worker_id = config.worker_id
        self.queue = QueueRepository(db, policy)
        self.hosts = HostRepository(db)
        self.fetch_log = FetchLogRepository(db)
        self.stats = StatsRepository(db)
        self.sink_backoff = SinkBackoff(config.sink_retry_s, config.sink_retry_max_s)
        self.archive = (
            None
            if config.archive_dir is None
            else ArchiveStep(
                db,
                config.archive_dir,
                config.worker_id,
                rotate_bytes=config.archive_rotate_bytes,
                retention=config.archive_retention,
                backoff=SinkBackoff(config.sink_retry_s, config.sink_retry_max_s),
            )
        )
        self.pipeline = BatchPipeline(
            client=client,
            sink=sink,
            config=config,
            hosts=self.hosts,
            sources=SourceCache(SourceRepository(db)),
            duplicates=DuplicateContent(db),
            near_duplicates=NearDuplicates(db),
            queue=self.queue,
            robots=RobotsStep(
                self.hosts,
                client,
                self.fetch_log,
                config,
                parser or ParsePool(config.parse),
                self.archive,
            ),
            worker_id=self.worker_id,
            sink_backoff=self.sink_backoff,
            keys=KeyRepository(db),
            extraction=extraction,
            archive=self.archive,
            versions=(
                DocumentVersions(db, config.document_versions) if config.document_versions else None
            ),
            renderer=renderer,
        )
        self.summary = FetchSummary()  # everything this worker did
        self.in_flight: dict[str, Claim] = {}  # claims being processed, by url_hash
        # Of those, the claims still being fetched and extracted: `concurrency` bounds
        # these (the requests in flight); a batch being stored and completed frees its
        # slots for the next claim, so the requests and the parsing never wait on the
        # database's round trips (bench/RESULTS.md). `fetched` is set as a batch does so.
        self.fetching = 0
        self.fetched = asyncio.Event()
        # What the pages being stored and completed hold (`Page.held_bytes`), and its bound:
        # what the pages being requested can hold at most, each a body the client caps.
        # Claims stop while it is reached (`full`); `fetched` is set as it falls below.
        self.held_bytes = 0
        self.held_bytes_bound = config.concurrency * client.limits.max_body_bytes
        self._last_prune: float | None = None  # time.monotonic() of the last pruning
        # The batches' finishes, grouped: pages done while another batch's finish runs
        # are stored, completed and logged with the others done meanwhile, in one finish
        # (its round trips are the same for one page or fifty: bench/RESULTS.md).
        self._finishes: Together[_Wave, None] = Together(self._finish_group)

    # -- one batch ------------------------------------------------------------------------

    async def claim(self, limit: int, *, now: datetime | None = None) -> list[Claim]:
        """Lease up to `limit` URLs, at most one per host, holding each host with a delay
        until its answer is in (`now`: the database's clock)."""
        return await self.queue.claim(self.worker_id, limit, now=now)

    async def run_once(self, now: datetime | None = None, limit: int | None = None) -> FetchSummary:
        """Claim up to `limit` URLs (default: the claim batch) as of `now` (default: the
        database's clock), process them to completion; returns what this batch did."""
        claims = await self.claim(limit or self.config.claim_batch, now=now)
        if not claims:
            return FetchSummary()
        return await self.process(claims, now=now)

    async def process(
        self, claims: Sequence[Claim], *, now: datetime | None = None
    ) -> FetchSummary:
        """Fetch claimed URLs and complete every one of them. If this is cancelled (a stop
        past its deadline) or fails, claims not completed are released untried."""
        self._hold(claims)
        return await self._process_held(claims, now)

    def start(self, claims: Sequence[Claim]) -> asyncio.Task[None]:
        """`process` the claims in a task of their own (errors logged, not raised). They
        count as in flight, and against the concurrency, from this call: a claim loop
        that counts its free slots again at once sees them, though the task has not yet
        run."""
        self._hold(claims)
        return asyncio.create_task(self._guarded(claims))

    def _hold(self, claims: Sequence[Claim]) -> None:
        for claim in claims:
            self.in_flight[claim.url_hash] = claim
        self.fetching += len(claims)

    async def _process_held(
        self, claims: Sequence[Claim], now: datetime | None = None
    ) -> FetchSummary:
        """`process`, the claims already held (`_hold`)."""
        batch = FetchSummary(claimed=len(claims))
        try:
            fetching = len(claims)
            try:
                # Each group of pages done is stored and completed while the rest of the
                # batch is still fetched or extracted (BatchPipeline.waves).
                async with aclosing(self.pipeline.waves(claims, now=now)) as waves:
                    async for pages in waves:
                        self.fetching -= len(pages)
                        fetching -= len(pages)
                        self.fetched.set()
                        held = sum(page.held_bytes() for page in pages)
                        self.held_bytes += held
                        try:
                            await self._finish_together(pages, batch, now)
                        finally:
                            self._let_go(held)
            finally:
                self.fetching -= fetching
                self.fetched.set()
            batch.batches += 1
        except BaseException:
            left = [c for c in claims if c.url_hash in self.in_flight]
            if left:
                batch.released += await asyncio.shield(
                    self.release(left, wait_for_database=True, now=now)
                )
            raise
        finally:
            for claim in claims:
                self.in_flight.pop(claim.url_hash, None)
            self.summary.add(batch)
        return batch

    @property
    def full(self) -> bool:
        """Whether the pages being stored hold as much as their bound allows: the claim
        loop claims nothing until they let go."""
        return self.held_bytes >= self.held_bytes_bound

    def _let_go(self, held: int) -> None:
        """The pages holding `held` bytes are stored and completed (or failed): wake the
        claim loop if they were what stopped it."""
        stopped = self.full
        self.held_bytes -= held
        if stopped and not self.full:
            self.fetched.set()

    async def release(
        self,
        claims: Sequence[Claim],
        *,
        wait_for_database: bool = False,
        now: datetime | None = None,
    ) -> int:
        """Give claims back untried; with `wait_for_database`, ride out an outage while
        their leases hold (a stopping process does not wait). Returns how many were."""
        released = 0
        try:
            if wait_for_database:
                result = await self._while_leased(
                    lambda: self.queue.release(self.worker_id, claims, now=now)
                )
            else:
                result = await self.queue.release(self.worker_id, claims, now=now)
            released = len(result.applied)
        except Exception as exc:  # the reaper returns them after lease expiry
            log.error(
                "could not release %d claims (%s); their leases will expire", len(claims), exc
            )
        for claim in claims:
            self.in_flight.pop(claim.url_hash, None)
        return released

    async def _finish_together(
        self, pages: list[Page], batch: FetchSummary, now: datetime | None
    ) -> None:
        """`_finish` these pages with those of every batch done while another batch's
        finish runs (`fetcher.together`); only batches of one `now` go together."""
        await self._finishes.run((pages, batch, now), key=now)

    async def _finish_group(self, waves: list[_Wave]) -> None:
        await self._finish_waves([(pages, batch) for pages, batch, _ in waves], waves[0][2])

    async def _finish(self, pages: list[Page], batch: FetchSummary, now: datetime | None) -> None:
        await self._finish_waves([(pages, batch)], now)

    async def _finish_waves(
        self, waves: list[tuple[list[Page], FetchSummary]], now: datetime | None
    ) -> None:
        """Store the pages of `waves` (each a group of a batch's pages and the batch's
        summary), then complete them and log them, each page counted in its batch."""
        pages = [page for wave, _ in waves for page in wave]
        # The pages are fetched: if the database is down, hold them and try again rather
        # than throw the work away (both steps are safe to repeat).
        await self._while_leased(lambda: self.pipeline.store(pages))
        outcomes = [o for o in (p.completed() for p in pages) if o is not None]
        missing = [p.claim for p in pages if p.outcome is None]
        outcomes += [Outcome(c, OutcomeKind.DEFERRED, error="no outcome") for c in missing]
        outbox = self._to_outbox(pages)
        result = await self._while_leased(
            lambda: self.queue.complete(self.worker_id, outcomes, now=now, outbox=outbox)
        )
        refused = set(result.refused)
        for claim_hash in refused:
            log.warning("completion refused for %s (lease lost to the reaper?)", claim_hash)
        for page in pages:
            self.in_flight.pop(page.claim.url_hash, None)
        entries: list[LogEntry] = []
        for wave, batch in waves:
            logged = self._logged(wave, batch, refused)
            log_batch(logged)  # one line a batch, as each batch finished on its own
            entries += logged
        try:
            await self.fetch_log.record(entries)
        except Exception as exc:  # the log is observability: never fail the batch for it
            log.error("could not write %d fetch_log rows: %s", len(entries), exc)

    def _logged(self, pages: list[Page], batch: FetchSummary, refused: set[str]) -> list[LogEntry]:
        """The fetch_log rows of a batch's pages completed (each counted in `batch`), and
        a line for each failure."""
        entries = []
        for page in pages:
            outcome = page.outcome
            if outcome is None or page.claim.url_hash in refused:
                continue  # a refused completion did not happen: whoever holds it now logs it
            batch.outcomes[str(outcome.kind)] += 1
            entries.append(
                LogEntry(
                    FetchKind.REVISIT if page.claim.is_revisit else FetchKind.PAGE,
                    page.claim.source_id,
                    page.claim.url,
                    LOG_OUTCOMES[outcome.kind],
                    http_status=outcome.http_status,
                    elapsed_ms=page.elapsed_ms,
                    error=outcome.error,
                )
            )
            log.debug(
                "page url=%s outcome=%s http=%s ms=%s",
                page.claim.url,
                outcome.kind,
                outcome.http_status,
                page.elapsed_ms,
            )
            if outcome.error:  # a failure is one line, the cause first
                log.info(
                    "fetch %s: %s (%s)",
                    outcome.kind,
                    outcome.error,
                    page.claim.url,
                    extra={"url": page.claim.url, "outcome": str(outcome.kind)},
                )
        return entries

    def _to_outbox(self, pages: list[Page]) -> OutboxWrites | None:
        """The outbox rows of the pages' documents, for the optional sinks, written with
        their completion (the rows of the URLs it completes). Every page fetched: one its
        source revisits stays `pending` for the next visit, its document stored all the
        same."""
        if not self.optional_sinks:
            return None
        documents = [
            p.document
            for p in pages
            if p.document is not None
            and p.outcome is not None
            and p.outcome.kind is OutcomeKind.FETCHED
        ]
        if not documents:
            return None
        return OutboxWrites.of(self.optional_sinks, documents, with_payload=self.outbox_payloads)

    async def _while_leased(self, step: Callable[[], Awaitable[T]]) -> T:
        """Run `step`, riding out a database outage for up to half a lease from the first
        failure: lease renewal runs every third of a lease, so the claims are still ours."""
        return await self.db.outage.ride_out(step, self.queue.policy.lease_seconds / 2)

    # -- the ticks of the timer loops -------------------------------------------------------

    async def renew_once(self, now: datetime | None = None) -> set[str]:
        """Extend the leases of the claims in flight; returns the hashes renewed."""
        claims = list(self.in_flight.values())
        if not claims:
            return set()
        return await self.queue.renew(self.worker_id, claims, now=now)

    async def maintain_once(self, now: float | None = None) -> None:
        """The reaper, the fold of host summaries left waiting and counter compaction;
        fetch_log pruning when the last one is `PRUNE_EVERY_S` old. `now`:
        time.monotonic()."""
        now = time.monotonic() if now is None else now
        reaped = await self.queue.reap()
        if reaped.returned or reaped.dead or reaped.host_leases:
            log.info("reaper: %s", reaped)
        # Host summaries a submit left unfolded (an import killed between its folds).
        await self.queue.fold_host_deltas()
        await self.stats.compact()
        if self.archive is not None:
            await self.archive.maintain()
        if self._last_prune is None or now - self._last_prune > PRUNE_EVERY_S:
            await self.fetch_log.prune(self.config.fetch_log_retention)
            self._last_prune = now

    def paused_for(self, now: float) -> float:
        """Seconds before claiming again: while the sink is down, or the archive's disk
        refuses writes, fetched pages could not be kept."""
        paused = self.sink_backoff.paused_for(now)
        if self.archive is not None:
            paused = max(paused, self.archive.paused_for(now))
        return paused

    async def close(self) -> None:
        """Seal the archive's open file (`run` does it as it ends)."""
        if self.archive is not None:
            await self.archive.close()

    # -- the process ------------------------------------------------------------------------

    async def run(
        self, *, until_idle: bool = False, stop: asyncio.Event | None = None
    ) -> FetchSummary:
        """Fetch until `stop` is set (or, with `until_idle`, until nothing is due and nothing
        is in flight). On stop: no more claims; in-flight batches get `shutdown_s` to finish,
        then are cancelled and their claims released."""
        stop = stop or asyncio.Event()
        wake = asyncio.Event()
        outage = self.db.outage
        renew_every = max(self.queue.policy.lease_seconds / 3, 1.0)
        helpers = [
            asyncio.create_task(
                run_every(
                    stop,
                    self.renew_once,
                    renew_every,
                    outage,
                    name="lease renewal",
                    wait_first=True,
                )
            ),
            asyncio.create_task(
                run_every(
                    stop,
                    self.maintain_once,
                    self.config.maintenance_every_s,
                    outage,
                    name="fetcher maintenance",
                )
            ),
            asyncio.create_task(listen(self.db, wake, stop)),
        ]
        try:
            await self._claim_until_stopped(wake=wake, stop=stop, until_idle=until_idle)
        finally:
            for helper in helpers:
                helper.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)
            await self.close()
        return self.summary

    async def _claim_until_stopped(
        self, *, wake: asyncio.Event, stop: asyncio.Event, until_idle: bool
    ) -> None:
        """Claim and process batches until `stop` (or, with `until_idle`, until nothing is due
        and nothing is in flight)."""
        config = self.config
        tasks: set[asyncio.Task[None]] = set()
        backoff = self.db.outage.backoff()
        heartbeat = Heartbeat(config.heartbeat_file)
        try:
            while not stop.is_set():
                now = time.monotonic()
                heartbeat.beat(now)
                # Every wait below is at most BEAT_EVERY_S, so the loop beats while alive.
                paused_s = self.paused_for(now)
                if paused_s > 0:
                    await first_of([*tasks], [stop], min(paused_s, BEAT_EVERY_S))
                    continue
                self.fetched.clear()  # before the count: a batch done after it wakes the wait
                free = claimable(
                    config.concurrency, self.fetching, len(self.in_flight), full=self.full
                )
                claimed = 0
                if free > 0:
                    try:
                        claims = await self.claim(min(free, config.claim_batch))
                    except DatabaseUnavailable as exc:  # wait, then claim again
                        delay = backoff.next_delay()
                        self.db.outage.report(exc, delay)
                        await first_of([], [stop], min(delay, BEAT_EVERY_S))
                        continue
                    except Exception as exc:  # a failing statement: wait a tick, try again
                        log.error("claim failed: %s", exc)
                        claims = []
                    else:
                        backoff.reset()
                    claimed = len(claims)
                    if claims:
                        task = self.start(claims)
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                        continue
                # The batches running now, taken before the awaits below: one that ends
                # meanwhile leaves `tasks` at once, and waiting on the rest would sleep the
                # whole timeout instead of looking again (a finished task wakes at once).
                running = [*tasks]
                if until_idle and not running and not claimed and await self._idle():
                    break
                # Slots full: a batch freeing them ends the wait (its task, or `fetched`).
                timeout = await self._idle_wait() if free > 0 else config.idle_poll_s
                wake.clear()
                await first_of(running, [wake, self.fetched, stop], min(timeout, BEAT_EVERY_S))
        finally:
            await self._shutdown(tasks)

    async def _guarded(self, claims: Sequence[Claim]) -> None:
        try:
            await self._process_held(claims)
        except asyncio.CancelledError:
            raise
        except DatabaseUnavailable as exc:  # no traceback: the outage is logged once
            log.warning("a batch of %d claims could not finish (%s)", len(claims), exc)
        except Exception:
            log.exception("a batch of %d claims failed; released", len(claims))

    async def _idle(self) -> bool:
        try:
            if await self.queue.fold_host_deltas():
                return False  # URLs an unfinished submit left were not claimable until now
            return not await self.hosts.due_now() and await self.queue.in_flight() == 0
        except DatabaseUnavailable:
            return False  # the claim loop reports the outage and backs off
        except Exception as exc:
            log.error("idle check failed: %s", exc)
            return False

    async def _idle_wait(self) -> float:
        """Sleep until the next host becomes ready, at most the poll interval."""
        poll_s = self.config.idle_poll_s
        try:
            due = await self.queue.next_due()
        except Exception:
            return poll_s
        if due is None:
            return poll_s
        return min(max((due - utcnow()).total_seconds(), 0.01), poll_s)

    async def _shutdown(self, tasks: set[asyncio.Task[None]]) -> None:
        if tasks:
            _done, pending = await asyncio.wait(set(tasks), timeout=self.config.shutdown_s)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        left = list(self.in_flight.values())
        if left:
            self.summary.released += await self.release(left)


def claimable(concurrency: int, fetching: int, held: int, *, full: bool = False) -> int:
    """How many URLs the claim loop may claim now: pages being requested and extracted
    (`fetching`) up to `concurrency`, and claims held in all (`held`, those being stored
    too) up to HELD_PER_SLOT times that, so pages waiting on a slow database stop the
    claims instead of piling up; none while the pages being stored hold as much as their
    bound allows (`full`: `Fetcher.full`)."""
    if full:
        return 0
    return min(concurrency - fetching, HELD_PER_SLOT * concurrency - held)


def log_batch(entries: Sequence[LogEntry]) -> None:
    """One INFO line per fetched batch (not per page): how many pages by outcome and the
    slowest, with the counts as fields for FRONTIER_LOG_FORMAT=json."""
    if not entries:
        return
    outcomes = Counter(str(entry.outcome) for entry in entries)
    slowest = max((entry.elapsed_ms or 0) for entry in entries)
    log.info(
        "fetched %d pages: %s; slowest %d ms",
        len(entries),
        ", ".join(f"{outcome} {n}" for outcome, n in sorted(outcomes.items())),
        slowest,
        extra={"pages": len(entries), "outcomes": dict(outcomes), "slowest_ms": slowest},
    )
