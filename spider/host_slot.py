"""The spider holds each host as the fetchers do, so a spider and any number of fetchers and
pollers together keep one request in flight per host, the next no sooner than its delay
after the previous answer (frontier/host_slots.py).

`HostSlotDownloadHandler` is Scrapy's HTTP/1.1 download handler with a hold around it:
before a request is sent (listing pages, their redirect hops and retries, and robots.txt,
which counts against the delay as the fetchers count theirs), it takes the host's hold in
PostgreSQL (`HostSlots.take`), creating the host's row if missing; when the answer is in
(or the request failed), it gives the host back, and the host's next request waits the
delay after that moment. While the host is not free (another requester's request in
flight, the delay since its answer, a backoff after 429/503) the request waits on the
event loop (the reactor is asyncio's, so other hosts' requests go on).

Why a download handler and not a downloader middleware: the handler runs after Scrapy's
download slot, right around the connection, so the hold covers the request and nothing
else (a middleware's `process_request` runs before the request may still queue behind the
previous one of its host). With `CONCURRENT_REQUESTS_PER_DOMAIN` 1, at most one request
per host waits here; Scrapy's own DOWNLOAD_DELAY is 0 and AutoThrottle is off
(`spider.crawl_settings`), so nothing adds on top of the host's delay.

A host backing off for longer than `BACKOFF_PATIENCE_S` is not requested: the request
fails with `HostBackingOff` (counted `host_backoff`).
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

from scrapy import Request
from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response

from frontier import host_slots
from frontier.db import Database
from frontier.host_slots import HostSlots, requester_id, slot_host
from frontier.politeness_key import KeyFinder, KeyMode
from frontier.safe_http.connector import requests_resolver
from frontier.safe_http.limits import HttpLimits
from frontier.urls import InvalidURL
from spider.middlewares import ALLOW_PRIVATE, ALLOWED_NETWORKS
from spider.pipeline import DSN

NEW_HOST_DELAY_MS = "FRONTIER_NEW_HOST_DELAY_MS"
POLITENESS_KEY = "FRONTIER_POLITENESS_KEY"


class HostBackingOff(IgnoreRequest):
    """The host backs off (after a 429 or 503) for longer than the spider waits."""


class HostSlotDownloadHandler(HTTP11DownloadHandler):
    """Scrapy's HTTP/1.1 handler; each request first takes its host's slot."""

    lazy = False

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self._dsn: str = crawler.settings.get(DSN)
        self._new_host_delay_ms = crawler.settings.getint(NEW_HOST_DELAY_MS, 1000)
        # A hold outlives its request's timeout only when the spider died holding it.
        self._lease_s = max(60.0, 2 * crawler.settings.getfloat("DOWNLOAD_TIMEOUT", 180.0))
        self._owner = requester_id("spider")
        self._key_mode = KeyMode(crawler.settings.get(POLITENESS_KEY) or KeyMode.HOST)
        # A key by address: looked up as the spider's requests' are (its guard is the
        # resolver's, spider.middlewares), cached for the crawl.
        limits = HttpLimits(
            "",
            allow_private_networks=crawler.settings.getbool(ALLOW_PRIVATE),
            allowed_networks=tuple(crawler.settings.getlist(ALLOWED_NETWORKS)),
        )
        self._key_finder = KeyFinder(partial(requests_resolver, limits))
        self._stats = crawler.stats
        self._db: Database | None = None
        self._connecting = asyncio.Lock()

    async def _slots(self) -> HostSlots:
        async with self._connecting:
            if self._db is None:
                self._db = await Database.connect(self._dsn, min_size=1, max_size=4)
        return HostSlots(
            self._db,
            self._owner,
            self._new_host_delay_ms,
            self._lease_s,
            key_mode=self._key_mode,
            key_finder=self._key_finder,
        )

    async def download_request(self, request: Request) -> Response:
        try:
            host = slot_host(request.url)
        except InvalidURL as exc:
            raise IgnoreRequest(f"{exc} ({request.url})") from None
        slots = await self._slots()
        try:
            held = await slots.take(host)
        except host_slots.HostBackingOff as exc:
            raise HostBackingOff(str(exc)) from None
        finally:
            if slots.waited_s > 0:
                self._stats.inc_value("frontier/slot_wait_ms", round(slots.waited_s * 1000))
        try:
            return await super().download_request(request)
        finally:
            if held:
                await asyncio.shield(slots.release(host))

    async def close(self) -> None:
        await super().close()
        if self._db is not None:
            await self._db.close()
