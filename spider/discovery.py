"""The discovery spider: walks a source's listing and navigation pages, breadth first,
and yields the article URLs it finds (`ArticleLink`) and what it learnt of each listing page
(`PageCheck`) to the frontier pipeline. It never extracts content: fetchers do that.

- Start pages (the source's base_url and listing URLs) are depth 0; a link found on a page
  at depth d has depth d + 1. Listing pages are followed while their depth is at most
  `max_depth` and the page budget lasts; article pages are submitted, not followed.
- Incremental: a page with stored validators is fetched with If-None-Match /
  If-Modified-Since; a 304, or the same set of links as last time, counts as unchanged. A
  non-start page that has gone unchanged is not fetched again until as long again has
  passed (at most the recrawl maximum); the listing pages it linked to last time are walked
  instead, so a skipped page does not cut off its subtree.
- A page whose robots rules say `nofollow` (or `none`), in its X-Robots-Tag header or its
  robots meta tag, for every crawler or for ours: none of its links is followed.
- Only HTML is parsed. A page answering `og:type=article` (when the source has no patterns)
  is an article: it is submitted and its links are not followed.

Counters go to the Scrapy stats under `frontier/`; `spider.summary` turns them into the run
summary.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import scrapy
from scrapy.core.downloader.handlers.http11 import TunnelError
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadConnectionRefusedError,
    IgnoreRequest,
)
from scrapy.http import HtmlResponse, Request, Response
from scrapy.linkextractors import LinkExtractor
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.error import ConnectError, DNSLookupError
from twisted.python.failure import Failure

from frontier.robots_directives import NOFOLLOW, header_directives, meta_directives, names_for
from frontier.safe_http.errors import BlockedAddress
from spider.host_slot import HostBackingOff
from spider.items import ArticleLink
from spider.links import LinkKind, looks_like_article
from spider.middlewares import BlockedRequest, refused_by_resolver
from spider.plan import CrawlPlan
from spider.state import PageCheck
from spider.summary import LAST_ERROR

MAX_CHILDREN = 2_000  # listing links remembered per page for incremental walks
META_URL = "frontier_url"  # the URL requested (stays the same across redirects)
META_DEPTH = "frontier_depth"
META_PARENT = "frontier_parent"


class DiscoverySpider(scrapy.Spider):
    name = "frontier-discovery"

    def __init__(self, plan: CrawlPlan, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan = plan
        self.now = plan.started_at or datetime.now(UTC)
        self.requested: set[str] = set()
        self.skipped: set[str] = set()
        self.submitted: set[str] = set()
        self.external: set[str] = set()
        self.extractor = LinkExtractor(deny_extensions=[], unique=True, canonicalize=False)

    def count(self, key: str, n: int = 1) -> None:
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value(f"frontier/{key}", n)

    def failed_because(self, cause: str, url: str, *, keep_earlier: bool = False) -> None:
        """Keep the cause of a failure, then its URL, as the run's last error (what the
        dashboard and the fetch log show); `keep_earlier` keeps an earlier one (a start
        page disallowed because its robots.txt was unreachable keeps that cause)."""
        stats = self.crawler.stats
        assert stats is not None
        if keep_earlier and stats.get_value(LAST_ERROR):
            return
        stats.set_value(LAST_ERROR, f"{cause} ({url})")

    async def start(self) -> AsyncIterator[Any]:
        for request in self._walk(self.plan.start_urls, 0, None, start=True):
            yield request

    def _walk(
        self,
        urls: tuple[str, ...] | list[str],
        depth: int,
        parent: str | None,
        *,
        start: bool = False,
    ) -> Iterator[Request]:
        """Requests for listing pages `urls` (as the site wrote them; deduplicated and keyed
        by their normalised form) at `depth`. Pages skipped as recently unchanged are
        replaced by the listing pages they linked to last time (iteratively)."""
        pending = [(href, depth, parent, start) for href in urls]
        while pending:
            href, level, via, is_start = pending.pop(0)
            url = self.plan.classifier.key(href)
            if url is None or url in self.requested or url in self.skipped:
                continue
            if level > self.plan.limits.max_depth:
                continue
            state = self.plan.pages.get(url)
            if state is not None and not is_start and self.now < self.plan.skip_until(state):
                self.skipped.add(url)  # not fetched: takes none of the budget
                self.count("pages_skipped")
                pending.extend((child, level + 1, url, False) for child in state.children)
                continue
            if len(self.requested) >= self.plan.limits.max_pages:
                self.count("budget_exhausted")
                return
            self.requested.add(url)
            headers = {}
            if state is not None and state.etag:
                headers["If-None-Match"] = state.etag
            if state is not None and state.last_modified:
                headers["If-Modified-Since"] = state.last_modified
            yield Request(
                href,
                headers=headers,
                callback=self.parse,
                errback=self.failed,
                meta={
                    META_URL: url,
                    META_DEPTH: level,
                    META_PARENT: via,
                    "handle_httpstatus_list": [304],
                },
            )

    def parse(self, response: Response) -> Iterator[Any]:
        url = response.meta[META_URL]
        depth: int = response.meta[META_DEPTH]
        self.count("pages_crawled")
        state = self.plan.pages.get(url)
        if response.status == 304:
            self.count("pages_unchanged")
            if state is not None:
                yield PageCheck(url, state.etag, state.last_modified, None)
                yield from self._walk(list(state.children), depth + 1, url)
            return
        if not isinstance(response, HtmlResponse):
            self.count("pages_not_html")
            return
        if self.plan.uses_heuristic and _og_type(response) == "article":
            yield from self._submit(
                response.url,
                self.plan.source,
                response.meta[META_PARENT] or url,
                depth,
                response.url,
            )
            return
        links = self.extractor.extract_links(response)
        if NOFOLLOW in self._robots_rules(response):
            # The page asks crawlers not to follow its links (Google's robots meta tag
            # spec): it has none for us, to submit or to walk.
            self.count("pages_nofollow")
            links = []
        listing: list[str] = []
        seen: list[str] = []
        for link in links:
            found = self.plan.classifier.classify(link.url, response.url)
            if found.kind is LinkKind.IGNORED:
                continue
            seen.append(found.url)
            if found.kind is LinkKind.ARTICLE:
                yield from self._submit(
                    found.url, self.plan.source, response.url, depth + 1, found.href
                )
            elif found.kind is LinkKind.LISTING:
                listing.append(found.href)
            elif found.kind is LinkKind.KNOWN_SOURCE:
                assert found.source is not None
                self.count("known_source_links")
                yield from self._submit(
                    found.url, found.source.ref, response.url, depth + 1, found.href
                )
            else:
                yield from self._external(found.url, response.url, depth + 1, found.href)
        links_hash = hashlib.sha256("\n".join(sorted(set(seen))).encode()).hexdigest()
        if state is not None and state.links_hash == links_hash:
            self.count("pages_unchanged")
        children = tuple(dict.fromkeys(listing))[:MAX_CHILDREN]
        yield PageCheck(
            url,
            _header(response, b"ETag"),
            _header(response, b"Last-Modified"),
            links_hash,
            children,
        )
        yield from self._walk(list(children), depth + 1, response.url)

    def _robots_rules(self, response: HtmlResponse) -> frozenset[str]:
        """The page's robots rules for us: its X-Robots-Tag headers and its robots meta
        tags, for `robots` and our product token (`frontier.robots_directives`)."""
        names = names_for(str(self.settings.get("USER_AGENT") or ""))
        headers = [v.decode("latin-1") for v in response.headers.getlist(b"X-Robots-Tag")]
        metas = [
            (node.attrib.get("name", ""), node.attrib.get("content", ""))
            for node in response.xpath("//meta[@name][@content]")
        ]
        return header_directives(headers, names) | meta_directives(metas, names)

    def _submit(
        self, url: str, source: Any, parent: str, depth: int, href: str = ""
    ) -> Iterator[ArticleLink]:
        """`url` normalised (the seen-key), `href` as the page spelt it (what is requested)."""
        if url in self.submitted:
            return
        self.submitted.add(url)
        self.count("articles_found")
        yield ArticleLink(url, source, parent, depth, href)

    def _external(self, url: str, parent: str, depth: int, href: str = "") -> Iterator[ArticleLink]:
        if url in self.external:
            return
        self.external.add(url)
        self.count("external_links")
        if self.plan.discovered is not None and looks_like_article(url):
            self.count("external_queued")
            yield from self._submit(url, self.plan.discovered, parent, depth, href)

    def failed(self, failure: Failure) -> None:
        """Errback: count why a page could not be used; never raises. A start page that
        could not be used fails the run (`start_pages_failed`); any other page is counted
        and the crawl goes on (a dead link on a listing page is the site's, not the run's)."""
        request = getattr(failure, "request", None)
        url = request.url if request is not None else "?"
        if request is not None and request.meta.get(META_DEPTH) == 0:
            self.count("start_pages_failed")
            self.failed_because(failure.getErrorMessage(), url, keep_earlier=True)
            self.logger.warning("start page failed: %s (%s)", failure.getErrorMessage(), url)
        if failure.check(HostBackingOff):
            self.count("host_backoff")
            self.logger.warning("%s", failure.getErrorMessage())
        elif failure.check(BlockedRequest, BlockedAddress) or (
            failure.check(DNSLookupError, CannotResolveHostError)
            and request is not None
            and refused_by_resolver(urlparse_cached(request).hostname or "")
        ):
            self.count("blocked")
            self.logger.warning("blocked by the SSRF guard: %s", url)
        elif request is not None and request.meta.get("proxy") and proxy_failed(failure):
            # the proxy failed, not the site: counted apart, tried again at the next crawl
            self.count("proxy_errors")
            self.failed_because(f"proxy error: {failure.getErrorMessage()}", url)
            self.logger.warning("proxy error: %s (%s)", failure.getErrorMessage(), url)
        elif failure.check(HttpError):
            response = failure.value.response  # type: ignore[union-attr]
            self.count("pages_crawled")  # it answered, just not usefully
            self.count("errors")
            self.count(f"http_status/{response.status}")
            self.failed_because(f"HTTP {response.status}", response.url)
            self.logger.info("HTTP %s from %s", response.status, response.url)
        elif failure.check(IgnoreRequest):
            message = failure.getErrorMessage()
            self.count("robots_blocked" if "robots.txt" in message else "ignored")
        else:
            self.count("errors")
            self.failed_because(failure.getErrorMessage(), url)
            self.logger.warning("failed: %s (%s)", failure.getErrorMessage(), url)


def _og_type(response: HtmlResponse) -> str | None:
    value = response.xpath('//meta[@property="og:type"]/@content').get()
    return value.strip().lower() if value else None


def _header(response: Response, name: bytes) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1")[:1000] if value else None


def proxy_failed(failure: Failure) -> bool:
    """Whether a proxied request failed at its proxy: the connection to it refused (a
    proxied request connects to nothing else), its CONNECT refused, or its 407."""
    if failure.check(DownloadConnectionRefusedError, ConnectError, TunnelError):
        return True
    if failure.check(HttpError):
        return bool(failure.value.response.status == 407)  # type: ignore[union-attr]
    return False
