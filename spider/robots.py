"""robots.txt for the spider: the core's verdict (`frontier.robots`, the fetchers' too), on
Scrapy's robots.txt flow.

`FrontierRobotParser` is the spider's ROBOTSTXT_PARSER (Scrapy's `RobotParser`): the
rules of `frontier.robots.rules_for_answer` for the product token of the crawl's user
agent, so the spider and the fetchers give the same answer for the same robots.txt and
user agent (BOM and NUL dropped, `User-agent:` lines read to their product token, at most
`ROBOTS_MAX_BYTES` read, a group of more than `MAX_GROUP_RULES` rules disallowing all).

`FrontierRobotsMiddleware` keeps Scrapy's per-host caching and request flow and changes:

- the answer: what its status means is the core's (`answer_status`): 2xx parsed; 4xx (and
  a redirect that could not be followed) allow all; 5xx, a timeout, a network error
  disallow all for this crawl. (A host the SSRF guard refuses gets no verdict: its pages
  are refused by the guard and counted blocked.)
- where the body is parsed: in a parse process (`frontier.parse_pool`, under the
  FRONTIER_PARSE_* limits), never on Scrapy's reactor, which serves every other host of
  the crawl meanwhile: the size and rule caps bound what a parse costs, but a robots.txt
  near the size cap still takes far longer than the few milliseconds the reactor may stop
  for (`python -m bench.robots_parse`). A parse over a limit disallows the host for this
  crawl, as the fetchers leave it "unavailable" for now. Matching a page against the
  parsed group (at most `MAX_GROUP_RULES` rules) is what stays on the reactor.
- the size: a `bytes_received` handler stops the robots download (Scrapy's
  `StopDownload(fail=False)`: the partial body is delivered) once `ROBOTS_MAX_BYTES` are
  in, so a huge file is neither read whole nor treated as a failure; a gzipped one may
  inflate to `ROBOTS_DOWNLOAD_CAP`.
"""

from __future__ import annotations

import logging
from typing import Any, Self
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest, StopDownload
from scrapy.http import Request, Response
from scrapy.robotstxt import RobotParser
from scrapy.utils.python import to_unicode
from twisted.internet.defer import Deferred

from frontier.parse_pool import ParseLimitExceeded, ParseLimits, ParsePool
from frontier.robots import ROBOTS_MAX_BYTES, ROBOTS_REDIRECTS, RobotsRules, rules_for_answer
from frontier.robots_directives import product_token
from frontier.states import RobotsStatus
from spider.middlewares import refused_by_resolver
from spider.summary import LAST_ERROR

log = logging.getLogger(__name__)

ROBOTS_DOWNLOAD_CAP = 2 * ROBOTS_MAX_BYTES  # what a gzipped robots.txt may inflate to
PARSE_LIMITS = "FRONTIER_PARSE_LIMITS"  # a `ParseLimits`, from the crawl's settings
_ROBOTS = "frontier_robots"
_RECEIVED = "frontier_robots_bytes"


def crawler_token(crawler: Any) -> str:
    """The product token robots.txt is matched with: of ROBOTSTXT_USER_AGENT, else of
    USER_AGENT (as Scrapy's middleware picks the user agent it asks with)."""
    settings = crawler.settings
    return product_token(settings.get("ROBOTSTXT_USER_AGENT") or settings.get("USER_AGENT"))


class FrontierRobotParser(RobotParser):
    """One host's robots.txt rules for the crawl's product token (`frontier.robots`)."""

    def __init__(self, rules: RobotsRules, token: str) -> None:
        self.rules = rules
        self.token = token

    @classmethod
    def from_crawler(cls, crawler: Any, robotstxt_body: bytes) -> Self:
        """Scrapy's contract: the rules of a 2xx `robotstxt_body`, parsed here. The
        middleware parses in a parse process instead (`_parse_robots`); Scrapy calls this
        with an empty body, once, to check the parser can be built."""
        token = crawler_token(crawler)
        return cls(rules_for_answer(200, robotstxt_body, token), token)

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        token = product_token(to_unicode(user_agent))
        if token != self.token:
            # Only the crawl's group is kept (as the fetchers keep it); the middleware
            # always asks with ROBOTSTXT_USER_AGENT, so this is a caller's mistake:
            # refuse politely rather than answer with another crawler's rules.
            log.warning("robots.txt asked for %r, parsed for %r: refused", token, self.token)
            return False
        return self.rules.allows(to_unicode(url), token)

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        token = product_token(to_unicode(user_agent))
        return self.rules.crawl_delay_s(token) if token == self.token else None


class FrontierRobotsMiddleware(RobotsTxtMiddleware):
    """Scrapy's robots.txt middleware with the core's verdict, parsed off the reactor."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        self._token = crawler_token(crawler)
        self._pool = ParsePool(crawler.settings.get(PARSE_LIMITS) or ParseLimits())
        crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)
        crawler.signals.connect(self._pool.close, signal=signals.engine_stopped)

    async def process_request(self, request: Request, spider: Any = None) -> None:
        if request.meta.get("dont_obey_robotstxt") and (
            request.meta.get(_ROBOTS) or request.url.endswith("/robots.txt")
        ):  # the robots request itself (or a redirect hop of it, which copies meta)
            request.meta[_ROBOTS] = True
            # RFC 9309's redirect cap (past it, Scrapy drops the request: no verdict, so
            # everything is allowed, as "unavailable" means)
            request.meta.setdefault("redirect_ttl", ROBOTS_REDIRECTS)
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

    async def _rules(self, status: int, body: bytes, netloc: str) -> RobotsRules:
        """The core's verdict on one answer; a body is parsed in a parse process."""
        if not (200 <= status < 300 and body):  # nothing to parse: decided here
            return rules_for_answer(status, body, self._token)
        try:
            return await self._pool.run(
                rules_for_answer, status, body[:ROBOTS_MAX_BYTES], self._token
            )
        except ParseLimitExceeded as exc:
            log.warning("robots.txt of %s unreadable: %s", netloc, exc)
            error = f"robots.txt unreadable: {exc}: disallowed for this crawl"
            return RobotsRules(RobotsStatus.DISALLOW_ALL, error=error)

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        # Scrapy's own, with the parser built from the verdict `_rules` reached off the
        # reactor (Scrapy's builds it from the body, inline).
        self._stats.inc_value("robotstxt/response_count")
        self._stats.inc_value(f"robotstxt/response_status_count/{response.status}")
        rules = await self._rules(response.status, response.body, netloc)
        log.debug("robots.txt of %s: HTTP %d, %s", netloc, response.status, rules.status)
        if rules.error:
            self._stats.set_value(LAST_ERROR, f"{rules.error} ({netloc})")
        parser = FrontierRobotParser(rules, self._token)
        await self.crawler.signals.send_catch_log_async(
            signal=signals.robots_parsed, robotparser=parser, request=request
        )
        self._settle(netloc, parser)

    def _robots_error(self, exc: Exception, netloc: str) -> None:
        host = urlsplit(f"//{netloc}").hostname or ""
        if isinstance(exc, IgnoreRequest) or refused_by_resolver(host):
            # The SSRF guard refused the host: no robots verdict, so the page request
            # meets the guard too and is counted as blocked, not as disallowed. (Past
            # ROBOTS_REDIRECTS hops Scrapy drops the request too: no verdict, allow all,
            # as RFC 9309 says of an "unavailable" robots.txt.)
            super()._robots_error(exc, netloc)
            return
        log.info("robots.txt unavailable (%s): disallowing all of %s for this crawl", exc, netloc)
        self._stats.inc_value("robotstxt/unreachable")
        self._stats.set_value(LAST_ERROR, f"robots.txt unreachable: {exc} ({netloc})")
        self._settle(
            netloc, FrontierRobotParser(rules_for_answer(None, None, self._token), self._token)
        )

    def _settle(self, netloc: str, parser: FrontierRobotParser) -> None:
        """Hand `parser` to the requests waiting for the host's robots.txt."""
        waiting = self._parsers[netloc]
        self._parsers[netloc] = parser
        if isinstance(waiting, Deferred):
            waiting.callback(parser)
