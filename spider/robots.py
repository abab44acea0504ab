"""robots.txt for the spider with the fetchers' rules (RFC 9309; `fetcher/robots.py`).

Scrapy's `RobotsTxtMiddleware` parses whatever body comes back (a 5xx error page: no
rules, so everything allowed) and allows everything when the download fails (a robots.txt
over DOWNLOAD_MAXSIZE is such a failure). `FrontierRobotsMiddleware` keeps its per-host
caching and request flow and changes only the verdict:

- 2xx: parsed up to `ROBOTS_MAX_BYTES` (512 KiB, RFC 9309 asks for at least 500 KiB); the
  rest is ignored. A `bytes_received` handler stops the robots download (Scrapy's
  `StopDownload(fail=False)`: the partial body is delivered) once the limit is reached,
  so a huge file is neither read whole nor treated as a failure; a gzipped one may
  inflate to `ROBOTS_DOWNLOAD_CAP`.
- 4xx (and a redirect that could not be followed): no usable file, everything allowed.
- 5xx, a timeout, a network error: everything disallowed for this crawl. (A host the SSRF
  guard refuses gets no verdict: its pages are refused by the guard and counted blocked.)
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import Request, Response
from scrapy.utils.misc import build_from_crawler

from spider.middlewares import refused_by_resolver
from spider.summary import LAST_ERROR

log = logging.getLogger(__name__)

ROBOTS_MAX_BYTES = 512 * 1024
ROBOTS_DOWNLOAD_CAP = 2 * ROBOTS_MAX_BYTES  # what a gzipped robots.txt may inflate to
_ROBOTS = "frontier_robots"
_RECEIVED = "frontier_robots_bytes"
DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"
ALLOW_ALL = b""


class FrontierRobotsMiddleware(RobotsTxtMiddleware):
    """Scrapy's robots.txt middleware with RFC 9309 statuses and size limit."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)

    async def process_request(self, request: Request, spider: Any = None) -> None:
        if request.meta.get("dont_obey_robotstxt") and (
            request.meta.get(_ROBOTS) or request.url.endswith("/robots.txt")
        ):  # the robots request itself (or a redirect hop of it, which copies meta)
            request.meta[_ROBOTS] = True
            # No transfer cap: `_bytes_received` stops the download at the limit and keeps
            # what came (a declared Content-Length over a cap would make Scrapy refuse the
            # file unread, and a refusal is "unreachable", which must not happen to a 2xx).
            request.meta["download_maxsize"] = 0
            return
        await super().process_request(request)

    def _bytes_received(self, data: bytes, request: Request, spider: Any = None) -> None:
        if not request.meta.get(_ROBOTS):
            return
        # The transfer's cap was read when the headers came; from here on the meta cap is
        # what HttpCompressionMiddleware allows a gzipped robots.txt to inflate to.
        request.meta["download_maxsize"] = ROBOTS_DOWNLOAD_CAP
        received = request.meta.get(_RECEIVED, 0) + len(data)
        request.meta[_RECEIVED] = received
        if received >= ROBOTS_MAX_BYTES:
            raise StopDownload(fail=False)

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        status = response.status
        if 200 <= status < 300:
            body = response.body[:ROBOTS_MAX_BYTES]
            verdict = "parsed"
        elif 300 <= status < 500:
            body, verdict = ALLOW_ALL, "allow all"
        else:
            body, verdict = DISALLOW_ALL, "disallow all"
        log.debug("robots.txt of %s: HTTP %d, %s", netloc, status, verdict)
        await super()._parse_robots(response.replace(body=body), netloc, request)

    def _robots_error(self, exc: Exception, netloc: str) -> None:
        host = urlsplit(f"//{netloc}").hostname or ""
        if isinstance(exc, IgnoreRequest) or refused_by_resolver(host):
            # The SSRF guard refused the host: no robots verdict, so the page request
            # meets the guard too and is counted as blocked, not as disallowed.
            super()._robots_error(exc, netloc)
            return
        log.info("robots.txt unavailable (%s): disallowing all of %s for this crawl", exc, netloc)
        self._stats.inc_value("robotstxt/unreachable")
        self._stats.set_value(LAST_ERROR, f"robots.txt unreachable: {exc} ({netloc})")
        parsers = self._parsers
        waiting = parsers[netloc]
        rules = build_from_crawler(self._parserimpl, self.crawler, DISALLOW_ALL)
        parsers[netloc] = rules
        waiting.callback(rules)  # type: ignore[union-attr]
