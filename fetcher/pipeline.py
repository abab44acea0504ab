"""The batch pipeline: from claimed URLs to pages with an outcome and, for those fetched,
a stored document.

`BatchPipeline.fetch(claims)`: source settings (fetchprotection), the robots.txt step, the
requests (each host held by the claim, its requests paced and the host given back when the
page's answer is in: `fetcher.politeness`), then the steps after a response
(`fetcher.response_steps.ResponseSteps`, which it extends: the decision, the verdicts,
the extraction and `store`). Completing the claims and logging them is the worker's
(`fetcher.worker`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from datetime import datetime
from functools import partial

from fetcher.archiving import ArchiveStep
from fetcher.config import FetcherConfig
from fetcher.extract_pool import ExtractionPool
from fetcher.extract_thread import InProcessExtraction
from fetcher.meta_refresh import refresh_target
from fetcher.page import Page, ms_since
from fetcher.politeness import BatchHolds
from fetcher.render_step import RenderStep
from fetcher.response_steps import ResponseSteps
from fetcher.robots_step import RobotsStep
from fetcher.sink_backoff import SinkBackoff
from fetcher.source_cache import UNKNOWN, SourceCache
from fetcher.verdict import login_wall
from frontier.chain_cookies import ChainCookies
from frontier.host_slots import Pace
from frontier.hosts import HostContext, HostRepository, KeyBusy
from frontier.politeness_key import KeyFinder, KeyMode, KeyRepository, KeyTake
from frontier.proxies import PROXY_RETRY_S
from frontier.queue import QueueRepository
from frontier.queue_values import Claim, OutcomeKind
from frontier.safe_http.client import SafeClient, redirect_chain
from frontier.safe_http.connector import requests_resolver
from frontier.safe_http.errors import (
    BlockedAddress,
    BodyTooLarge,
    FetchFailed,
    HttpError,
    PolicyBlocked,
    ProxyError,
    Refused,
    TooManyRedirects,
)
from frontier.safe_http.responses import REDIRECT_STATUSES, Response
from frontier.sinks import Sink
from frontier.sinks.duplicates import DuplicateContent
from frontier.sinks.near_duplicates import NearDuplicates
from frontier.urls import InvalidURL, request_spelling, same_identity
from frontier.versions import DocumentVersions

log = logging.getLogger(__name__)
LINGER_S = 1.0  # how long a page done waits for the rest of its batch (`waves`)
MAX_INLINE_HOPS = 5  # redirects and meta refreshes to the same identity, in all, per fetch


class BatchPipeline(ResponseSteps):
    """The fetch of a batch of claims, then `ResponseSteps` on each response."""

    def __init__(
        self,
        *,
        client: SafeClient,
        sink: Sink,
        config: FetcherConfig,
        hosts: HostRepository,
        sources: SourceCache,
        duplicates: DuplicateContent,
        near_duplicates: NearDuplicates,
        queue: QueueRepository,
        robots: RobotsStep,
        worker_id: str,
        sink_backoff: SinkBackoff,
        keys: KeyRepository,
        extraction: ExtractionPool | InProcessExtraction | None = None,
        archive: ArchiveStep | None = None,
        versions: DocumentVersions | None = None,
        renderer: RenderStep | None = None,
    ) -> None:
        super().__init__(
            sink=sink,
            config=config,
            duplicates=duplicates,
            queue=queue,
            sink_backoff=sink_backoff,
            extraction=extraction,
            archive=archive,
            versions=versions,
            near_duplicates=near_duplicates,
            renderer=renderer,
        )
        self.client = client
        self.keys = keys
        # The key of a host by address is looked up as its requests' addresses are.
        self.key_finder = KeyFinder(partial(requests_resolver, client.limits))
        self.hosts = hosts
        self.sources = sources
        self.robots = robots
        self.worker_id = worker_id

    # -- fetch ----------------------------------------------------------------------------

    async def fetch(self, claims: Sequence[Claim], *, now: datetime | None = None) -> list[Page]:
        """A page per claim; each either has its outcome or was fetched. Every host the
        batch held is given back by the time this returns."""
        pages: list[Page] = []
        async with aclosing(self.waves(claims, now=now)) as waves:
            async for wave in waves:
                pages += wave
        return pages

    async def waves(
        self, claims: Sequence[Claim], *, now: datetime | None = None, linger_s: float = LINGER_S
    ) -> AsyncGenerator[list[Page], None]:
        """The pages of `claims` (as `fetch` makes them), in groups as they are done: all
        at once when they are done together, as they nearly always are; a page done while
        others of the batch are still fetched or extracted waits for them `linger_s` at
        most, and then goes on without them, so that no page is held for long behind a
        slow one (a hostile page runs to its extraction limit). Every host the batch held
        is given back once the last group is out (or the iteration is closed)."""
        hosts = sorted({c.host for c in claims})
        context = await self.hosts.context(hosts, now=now)
        holds = BatchHolds(self.hosts, self.worker_id, claims, context, keys=self.keys, now=now)
        tasks: dict[asyncio.Task[None], Page] = {}
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
                elif page.source.credentials_error:  # retried: the secret may appear
                    page.end(OutcomeKind.RETRY, error=page.source.credentials_error)
                elif self.renderer is not None and (why := self.renderer.config_error(page)):
                    page.end(OutcomeKind.RETRY, error=why)  # retried: a browser may come
            await self._take_keys([p for p in pages if p.outcome is None], context, holds, now)
            waiting = [p for p in pages if p.outcome is None]
            await self.robots.check(waiting, context, holds, now=now)
            done = [p for p in pages if p.outcome is not None]  # no request to make
            tasks = {
                asyncio.create_task(self._fetch_page(p, holds, now)): p
                for p in waiting
                if p.outcome is None
            }
            running = set(tasks)
            first_done = time.monotonic() if done else None
            while running:
                timeout = None if first_done is None else first_done + linger_s - time.monotonic()
                finished, running = await asyncio.wait(
                    running,
                    timeout=max(timeout, 0.0) if timeout is not None else None,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                for task in finished:
                    task.result()  # a failure nobody planned for ends the batch
                    done.append(tasks[task])
                if done and first_done is None:
                    first_done = time.monotonic()
                if (
                    running
                    and first_done is not None
                    and (time.monotonic() - first_done >= linger_s)
                ):
                    wave, done, first_done = done, [], None
                    yield wave
            if done:
                yield done
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.shield(holds.release_all())

    async def _take_keys(
        self,
        pages: Sequence[Page],
        context: Mapping[str, HostContext],
        holds: BatchHolds,
        now: datetime | None,
    ) -> None:
        """Take the politeness key of each host the batch holds, when the page's key mode
        (its source's, else the setting) makes it wider than the host, before any request
        to it (robots.txt included). A page whose key is busy is deferred, no request made
        and no attempt counted, and its host given back snoozed until the key may be free
        (`BatchHolds.snooze`): a claim does not wait on a key while holding its host. Of
        two hosts of one key in the batch, the second finds it busy."""
        keyed = [  # a host without a delay takes no key, nor one keyed by itself
            (page, mode)
            for page in pages
            if page.claim.host in holds.held
            and (mode := page.source.politeness_key or self.config.politeness_key)
            is not KeyMode.HOST
        ]
        if not keyed:
            return
        found = await asyncio.gather(
            *(self.key_finder.key(page.claim.host, mode) for page, mode in keyed)
        )
        asks = [(page, key) for (page, _), key in zip(keyed, found, strict=True) if key]
        first: dict[str, Page] = {}
        for page, key in asks:
            first.setdefault(key, page)
        lease_s = self.queue.policy.lease_seconds
        takes = await asyncio.gather(
            *(
                self.keys.take(key, holds.held[page.claim.host], lease_s=lease_s, now=now)
                for key, page in first.items()
            )
        )
        taken = dict(zip(first, takes, strict=True))
        snoozes = []
        for page, key in asks:
            take = taken[key]
            host = page.claim.host
            if take.taken and first[key] is page:
                holds.key_taken(host, key)
                continue
            busy = KeyTake(key, False, held=True) if take.taken else take
            wait_s = busy.wait_s(context[host].delay_ms)
            # The URL stays due; its host waits for the key (the snooze).
            page.end(OutcomeKind.DEFERRED, error=busy.reason())
            snoozes.append(holds.snooze(host, KeyBusy(key, wait_s)))
        await asyncio.gather(*snoozes)

    async def _fetch_page(self, page: Page, holds: BatchHolds, now: datetime | None) -> None:
        started = time.monotonic()
        host = page.claim.host
        try:
            try:
                response, elsewhere = await self._follow(page, holds.paces[host])
            finally:  # every answer is in; a host without a delay is held by no one
                if host in holds.held:  # (a task a page less, on the bench's hosts)
                    await asyncio.shield(holds.release(host))
        except ProxyError as exc:
            # The proxy's failure, not the host's: deferred, nothing counted against the
            # URL or its host (no attempt, no failure toward the host's backoff).
            log.warning("%s", exc)
            page.end(OutcomeKind.DEFERRED, retry_after_s=PROXY_RETRY_S, error=str(exc))
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
            wall = None if elsewhere is None else login_wall(elsewhere, page.claim.url)
            if wall is not None:  # not queued: the login page is nobody's article
                page.end(OutcomeKind.LOGIN_REQUIRED, http_status=response.status, error=wall)
            elif elsewhere is not None:
                page.end(OutcomeKind.REDIRECT, http_status=response.status, redirect_to=elsewhere)
            else:
                await self.on_response(page, response.status, response.headers, response.body, now)
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
                exchanges=page.exchanges if self.archive else None,
                credentials=page.source.credentials,
                proxy=page.source.proxy,
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


def _resolved(location: str, base: str) -> str:
    """A redirect target as the server spelt it, resolved against the URL that answered;
    an unusable one is passed on as it is (the queue ends the URL with the reason)."""
    try:
        return request_spelling(location, base)
    except InvalidURL:
        return location
