"""The spider takes the same per-host slot in `host_state` as the fetchers, so a spider and
any number of fetchers together never send two requests to a host closer than its delay.

`HostSlotDownloadHandler` is Scrapy's HTTP/1.1 download handler with one step in front:
before a request is sent (listing pages, their redirect hops and retries, and robots.txt,
which counts against the delay as the fetchers count theirs), it takes the host's slot in
PostgreSQL (`HostRepository.take_slot`): one statement that moves `next_allowed_at` past
this request if it is due, creating the host's row if missing. When the host is not free
(another requester's delay, a backoff after 429/503, a fetcher's lease while it fetches
robots.txt) it says how long to wait; the request waits on the event loop (the reactor
is asyncio's, so other hosts' requests go on) and asks again.

Why a download handler and not a downloader middleware: Scrapy runs the middlewares'
`process_request` before a request enters its host's download slot, where it may still
queue behind the previous request of that host. A slot taken there could be used late,
after another requester's turn had begun. The handler runs after Scrapy's download slot,
right before the connection, so the request goes out as soon as its slot is taken (the
margin on top of the delay, as the fetchers keep it, absorbs DNS and connect time). A slot
whose answer came later than the margin after asking (a row lock, the commit, a reactor
busy elsewhere) is not used, as a fetcher's is not (`frontier.hosts.send_by`): the
request asks again, once the turn it took has passed (counted `frontier/slot_late`). With
`CONCURRENT_REQUESTS_PER_DOMAIN` 1, at most one request per host waits here; Scrapy's own
DOWNLOAD_DELAY is 0 and AutoThrottle is off (`spider.crawl_settings`), so nothing adds on
top of the host's delay.

A host backing off for longer than `BACKOFF_PATIENCE_S` is not requested: the request
fails with `HostBackingOff` (counted `host_backoff`). While the database is unavailable a
slot is asked for again with backoff for up to `DB_PATIENCE_S`; after that the request
fails (counted as an error): no request goes out without its slot.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from scrapy import Request
from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response

from frontier.db import Database
from frontier.hosts import SLOT_BACKOFF, SLOT_LEASE, HostRepository, send_by
from frontier.urls import InvalidURL, normalize_url, url_host
from spider.pipeline import DSN

NEW_HOST_DELAY_MS = "FRONTIER_NEW_HOST_DELAY_MS"
MARGIN_CAP_MS = 100  # as the fetchers' politeness margin (FetcherConfig.politeness_margin_ms)
BACKOFF_PATIENCE_S = 60.0  # a host backing off for longer is not requested in this crawl
LEASE_POLL_S = 0.25  # a fetcher's lease usually ends well before it expires: look again
DB_PATIENCE_S = 120.0


class HostBackingOff(IgnoreRequest):
    """The host backs off (after a 429 or 503) for longer than the spider waits."""


def slot_host(url: str) -> str:
    """The host_state key of a URL (host, plus a non-default port), as the frontier's."""
    return url_host(normalize_url(url))


class HostSlotDownloadHandler(HTTP11DownloadHandler):
    """Scrapy's HTTP/1.1 handler; each request first takes its host's slot."""

    lazy = False

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self._dsn: str = crawler.settings.get(DSN)
        self._new_host_delay_ms = crawler.settings.getint(NEW_HOST_DELAY_MS, 1000)
        self._stats = crawler.stats
        self._db: Database | None = None
        self._connecting = asyncio.Lock()

    async def _hosts(self) -> HostRepository:
        async with self._connecting:
            if self._db is None:
                self._db = await Database.connect(self._dsn, min_size=1, max_size=4)
        return HostRepository(self._db)

    async def download_request(self, request: Request) -> Response:
        await self.wait_for_slot(request)
        return await super().download_request(request)

    async def wait_for_slot(self, request: Request) -> None:
        try:
            host = slot_host(request.url)
        except InvalidURL as exc:
            raise IgnoreRequest(f"{exc} ({request.url})") from None
        hosts = await self._hosts()
        assert self._db is not None
        started, paused = time.monotonic(), False
        while True:
            asked = time.monotonic()
            slot = await self._db.outage.ride_out(
                lambda: hosts.take_slot(
                    host, new_host_delay_ms=self._new_host_delay_ms, margin_ms=MARGIN_CAP_MS
                ),
                DB_PATIENCE_S,
            )
            deadline = send_by(asked, slot.margin_ms)
            if slot.taken and deadline is not None and time.monotonic() > deadline:
                self._stats.inc_value("frontier/slot_late")  # ask again: the turn is spent
                paused = True
                continue
            if slot.taken:
                if paused:
                    waited_ms = round((time.monotonic() - started) * 1000)
                    self._stats.inc_value("frontier/slot_wait_ms", waited_ms)
                return
            if slot.reason == SLOT_BACKOFF and slot.wait_s > BACKOFF_PATIENCE_S:
                raise HostBackingOff(
                    f"{host} backs off for {slot.wait_s:.0f} s more (after 429/503): not requested"
                )
            pause = min(slot.wait_s, LEASE_POLL_S) if slot.reason == SLOT_LEASE else slot.wait_s
            paused = True
            await asyncio.sleep(max(pause, 0.001))

    async def close(self) -> None:
        await super().close()
        if self._db is not None:
            await self._db.close()
