"""The robots.txt step of a batch: fetch robots.txt for the hosts that need it (holding the
host, so one worker of all fetcher processes fetches it per host per TTL; see hosts.sql
`take_leases`), store it, and decide which pages robots.txt lets through. What a
robots.txt answer means is `frontier.robots` (the one verdict, shared with the spider and
the API); the body, and a stored robots.txt this process has no rules of yet, are parsed
in a parse process (`frontier.parse_pool`), never on the event loop: a parse over a limit
leaves the host "unavailable" for now (disallowed, robots.txt fetched again later), as a
5xx does."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import NamedTuple

from fetcher.archiving import ArchiveStep
from fetcher.config import FetcherConfig
from fetcher.page import Page, ms_since
from fetcher.politeness import BatchHolds
from frontier.fetch_log import FetchLogRepository, LogEntry
from frontier.host_slots import Pace
from frontier.hosts import HostContext, HostRepository, RobotsRecord
from frontier.parse_pool import ParseLimitExceeded, ParsePool
from frontier.proxies import PROXY_RETRY_S, ProxyRoute
from frontier.queue_values import OutcomeKind
from frontier.robots import ROBOTS_MAX_BYTES, ROBOTS_REDIRECTS, RobotsRules, interpret
from frontier.robots_directives import product_token
from frontier.safe_http.client import SafeClient
from frontier.safe_http.errors import BlockedAddress, HttpError, ProxyError, TooManyRedirects
from frontier.safe_http.responses import Exchange
from frontier.safe_http.ssrf import PRIVATE_NETWORKS_HINT
from frontier.states import FetchKind, LogOutcome, RobotsStatus

log = logging.getLogger(__name__)

LEASE_BUSY_RETRY_S = 5.0  # another worker is fetching the host's robots.txt
ROBOTS_CACHE_HOSTS = 10_000


class RobotsFetch(NamedTuple):
    """One host's robots.txt request: what it says (None: not asked, the address is not
    public) and its fetch_log entry."""

    record: RobotsRecord | None
    entry: LogEntry
    proxy_error: str | None = None  # not asked: the proxy failed (retried, not stored)


class RobotsStep:
    def __init__(
        self,
        hosts: HostRepository,
        client: SafeClient,
        fetch_log: FetchLogRepository,
        config: FetcherConfig,
        parser: ParsePool,
        archive: ArchiveStep | None = None,
    ) -> None:
        self.hosts = hosts
        self.archive = archive
        self.client = client
        self.fetch_log = fetch_log
        self.config = config
        self.parser = parser
        self.worker_id = config.worker_id
        self.token = product_token(config.user_agent)
        # Parsed rules per host, valid while the stored robots.txt is the same.
        self._rules: dict[str, tuple[datetime | None, RobotsRules]] = {}

    async def check(
        self,
        pages: Sequence[Page],
        context: dict[str, HostContext],
        holds: BatchHolds,
        *,
        now: datetime | None = None,
    ) -> None:
        """Settle robots.txt for the hosts of `pages` (those without an outcome yet) and end
        the pages it does not let through. `context` is updated with what was fetched, and
        `holds` learns of the hosts held for it and when their answer was in (the page
        request waits the delay after it); the caller gives them back."""
        hosts = {p.claim.host for p in pages if context[p.claim.host].robots_needed()}
        await self._settle(pages, context, holds, hosts, now)
        ruled = sorted(
            {
                p.claim.host
                for p in pages
                if p.outcome is None and context[p.claim.host].robots_status is RobotsStatus.OK
            }
        )
        found = await asyncio.gather(*(self._rules_for(context[host]) for host in ruled))
        rules = dict(zip(ruled, found, strict=True))
        for page in pages:
            if page.outcome is None:
                self._apply(page, context[page.claim.host], rules.get(page.claim.host))

    async def _settle(
        self,
        pages: Sequence[Page],
        context: dict[str, HostContext],
        holds: BatchHolds,
        hosts: set[str],
        now: datetime | None,
    ) -> None:
        """Fetch robots.txt for `hosts`, holding each (`take_leases`)."""
        if not hosts:
            return
        # A host the batch's claim holds is this batch's alone: nobody else fetches its
        # robots.txt meanwhile. The others are leased for it (single flight).
        held = {host for host in hosts if host in holds.held}
        leased = held | await self.hosts.take_leases(
            {host: context[host].robots_fetched_at for host in sorted(hosts - held)},
            self.worker_id,
            self.config.robots_lease_s,
            now=now,
        )
        missed = sorted(hosts - leased)
        if missed:
            # Another worker holds the lease, or stored robots.txt since `context` was read:
            # read it again; a host whose robots.txt is still to come is not ready yet.
            context.update(await self.hosts.context(missed, now=now))
        for page in pages:
            host = page.claim.host
            if host in missed and context[host].robots_needed():
                page.end(
                    OutcomeKind.DEFERRED,
                    retry_after_s=LEASE_BUSY_RETRY_S,
                    error="host not ready: robots.txt is being fetched by another worker",
                )
        schemes = {p.claim.host: p.claim.url.split("://", 1)[0] for p in pages}
        proxies = {p.claim.host: p.source.proxy for p in pages}  # the host's source's
        order = sorted(leased)
        results = await asyncio.gather(
            *(self._fetch(schemes[h], h, holds.paces[h], proxies[h]) for h in order)
        )
        fetched = dict(zip(order, results, strict=True))
        records = [r.record for r in fetched.values() if r.record is not None]
        unproxied = {host: r.proxy_error for host, r in fetched.items() if r.proxy_error}
        blocked = {h for h, r in fetched.items() if r.record is None and h not in unproxied}
        stored = await self.hosts.store_robots(
            records,
            ttl_hours=self.config.robots_ttl_hours,
            retry_base_s=self.config.robots_retry_s,
            now=now,
        )
        await self.fetch_log.record([r.entry for r in fetched.values()])
        for record in records:
            ctx = context[record.host]
            saved = stored.get(record.host)
            db_now = saved.now if saved else ctx.now
            context[record.host] = replace(
                ctx,
                robots_status=record.status,
                robots_txt=record.robots_txt,
                robots_fetched_at=db_now,
                robots_retry_at=saved.retry_at if saved else None,
                delay_ms=saved.delay_ms if saved else ctx.delay_ms,
                now=db_now,
            )
        for host in fetched:  # delay_ms: with its new Crawl-delay
            holds.robots_fetched(host, context[host].delay_ms)
        for page in pages:
            if page.claim.host in unproxied and page.outcome is None:
                page.end(
                    OutcomeKind.DEFERRED,
                    retry_after_s=PROXY_RETRY_S,
                    error=f"robots.txt not fetched: {unproxied[page.claim.host]}",
                )
            if page.claim.host in blocked and page.outcome is None:
                page.end(
                    OutcomeKind.BLOCKED_BY_POLICY,
                    error=f"robots.txt refused: the host's address is not public: "
                    f"{PRIVATE_NETWORKS_HINT}",
                )

    async def _fetch(
        self, scheme: str, host: str, pace: Pace, proxy: ProxyRoute | None = None
    ) -> RobotsFetch:
        url = f"{scheme}://{host}/robots.txt"
        started = time.monotonic()
        status: int | None = None
        body: bytes | None = None
        error: str | None = None
        exchanges: list[Exchange] = []
        try:
            response = await self.client.get(
                url,
                fetchprotection=1,
                follow_redirects=True,
                max_redirects=ROBOTS_REDIRECTS,
                max_body_bytes=ROBOTS_MAX_BYTES,
                truncate=True,
                pace=pace,
                exchanges=exchanges if self.archive else None,
                proxy=proxy,
            )
            status, body = response.status, response.body
        except BlockedAddress as exc:
            entry = LogEntry(
                FetchKind.ROBOTS,
                None,
                url,
                LogOutcome.REFUSED,
                error=str(exc),
                elapsed_ms=ms_since(started),
            )
            return RobotsFetch(None, entry)
        except ProxyError as exc:
            log.warning("%s", exc)
            entry = LogEntry(
                FetchKind.ROBOTS,
                None,
                url,
                LogOutcome.FAILED,
                error=str(exc),
                elapsed_ms=ms_since(started),
            )
            return RobotsFetch(None, entry, str(exc))
        except TooManyRedirects as exc:
            status, error = 310, str(exc)  # RFC 9309: past 5 redirects, "unavailable"
        except HttpError as exc:
            error = str(exc)
        if self.archive is not None and exchanges:
            await self.archive.keep_exchanges(exchanges)
        read = partial(
            interpret,
            host,
            token=self.token,
            http_status=status,
            body=body,
            error=error,
            max_crawl_delay_ms=self.config.robots_max_crawl_delay_ms,
        )
        try:
            # Only a body is parsed, and so only a body goes to a parse process: an
            # answer without one (4xx, 5xx, no answer) is read here at no cost.
            record = await self.parser.run(read) if _has_body(status, body) else read()
        except ParseLimitExceeded as exc:
            log.warning("robots.txt of %s unreadable: %s", host, exc)
            reason = f"robots.txt unreadable: {exc}: disallowed for now"
            record = RobotsRecord(host, RobotsStatus.DISALLOW_ALL, None, status, reason)
        if status == 310:
            record = replace(record, http_status=None)
        outcome = (
            LogOutcome.FAILED
            if record.status is RobotsStatus.DISALLOW_ALL
            else (LogOutcome.OK if record.status is RobotsStatus.OK else LogOutcome.NOT_FOUND)
        )
        entry = LogEntry(
            FetchKind.ROBOTS,
            None,
            url,
            outcome,
            http_status=record.http_status,
            elapsed_ms=ms_since(started),
            error=record.error,
        )
        log.debug("robots host=%s status=%s http=%s", host, record.status, record.http_status)
        return RobotsFetch(record, entry)

    async def _rules_for(self, ctx: HostContext) -> RobotsRules:
        """The host's rules: cached while its stored robots.txt is the same, else parsed
        in a parse process (not cached when that fails: tried again with the next page)."""
        cached = self._rules.get(ctx.host)
        if cached is not None and cached[0] == ctx.robots_fetched_at:
            return cached[1]
        try:
            if ctx.robots_status is RobotsStatus.OK and ctx.robots_txt:
                rules = await self.parser.run(
                    RobotsRules.of, ctx.robots_status, ctx.robots_txt, self.token
                )
            else:  # nothing to parse
                rules = RobotsRules.of(ctx.robots_status, ctx.robots_txt, self.token)
        except ParseLimitExceeded as exc:
            log.warning("stored robots.txt of %s unreadable: %s", ctx.host, exc)
            error = f"robots.txt unreadable: {exc}: disallowed for now"
            return RobotsRules(RobotsStatus.DISALLOW_ALL, error=error)
        if len(self._rules) >= ROBOTS_CACHE_HOSTS:
            self._rules.pop(next(iter(self._rules)))
        self._rules[ctx.host] = (ctx.robots_fetched_at, rules)
        return rules

    def _apply(self, page: Page, ctx: HostContext, rules: RobotsRules | None) -> None:
        """End `page` if robots.txt does not let it through; `rules`: the host's, when its
        robots.txt is `ok`."""
        if ctx.robots_status is RobotsStatus.UNKNOWN:
            page.end(
                OutcomeKind.DEFERRED,
                retry_after_s=LEASE_BUSY_RETRY_S,
                error="robots.txt not fetched yet",
            )
            return
        if ctx.robots_status is RobotsStatus.DISALLOW_ALL:
            wait = (
                (ctx.robots_retry_at - ctx.now).total_seconds()
                if ctx.robots_retry_at
                else self.config.robots_retry_s
            )
            page.end(
                OutcomeKind.DEFERRED,
                retry_after_s=max(wait, 1.0),
                error="robots.txt unavailable (5xx or unreachable): disallowed for now",
            )
            return
        if rules is not None and rules.status is RobotsStatus.DISALLOW_ALL:
            # a stored robots.txt this process could not use (a parse over a limit)
            page.end(
                OutcomeKind.DEFERRED, retry_after_s=self.config.robots_retry_s, error=rules.error
            )
        elif rules is not None and not rules.allows(page.claim.url, self.token):
            page.end(OutcomeKind.ROBOTS_BLOCKED, error="disallowed by robots.txt")


def _has_body(status: int | None, body: bytes | None) -> bool:
    """Whether a robots.txt answer has rules to parse (frontier.robots.interpret parses
    only a 2xx body)."""
    return status is not None and 200 <= status < 300 and bool(body)
