"""A news site on one host that several requesters crawl at once: the spider walks its
front page and sections while fetchers fetch its articles. A host limits a client as a
whole, whatever process the requests come from (nginx's `limit_req` keys on the client
address), while Scrapy's DOWNLOAD_DELAY holds per crawl process only
(scrapy/scrapyd#221: three crawls of one domain went three times faster than the delay).

`PoliteNewsSite` serves robots.txt (everything allowed, no Crawl-delay), a front page and
sections linking to dated articles with real text. `LocalSite` records every request with
its arrival time and headers; who sent it is told by its User-Agent.
"""

from __future__ import annotations

import asyncio
import contextlib

from aiohttp import web

from tests.local_site import Handler, LocalSite, Seen


def article_path(number: int) -> str:
    return f"/2024/03/{1 + number % 28:02d}/council-story-{number}"


def article_html(number: int) -> str:
    paragraphs = "".join(
        f"<p>Paragraph {k} of story {number}: the city council met on Tuesday and voted on "
        f"the budget for the coming year, after a long debate about the harbour.</p>"
        for k in range(1, 6)
    )
    return (
        f"<html><head><title>Council story {number}</title></head><body>"
        f"<article><h1>Council story {number}</h1>{paragraphs}</article></body></html>"
    )


def listing_html(links: list[str]) -> str:
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return f"<html><head><title>News</title></head><body><ul>{anchors}</ul></body></html>"


class PoliteNewsSite:
    """`sections` section pages under the front page, `articles` articles spread over
    them. The front page's answer is held until a fetcher has sent a request (or `hold_s`
    passed): the spider learns of the sections only then, so its section requests meet
    the fetchers' on the host however slowly the processes start. (Holding a section
    instead is not enough: Scrapy asks for several sections at once, and they may all
    arrive before the fetchers' first request.)"""

    def __init__(
        self, site: LocalSite, *, sections: int, articles: int, fetcher_agent: str
    ) -> None:
        self.site = site
        self.articles = [article_path(n) for n in range(articles)]
        self.sections = [f"/section/{n}" for n in range(1, sections + 1)]
        self.fetcher_agent = fetcher_agent
        self.fetcher_seen = asyncio.Event()
        self.hold_s = 20.0  # below the spider's page timeout
        site.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")
        site.route("/", self._held(listing_html(self.sections + self.articles[:2])))
        for index, section in enumerate(self.sections):
            site.serve(section, listing_html(self.articles[index :: len(self.sections)]))
        for number, path in enumerate(self.articles):
            site.route(path, self._article(article_html(number)))

    def _held(self, body: str) -> Handler:
        async def handler(_request: web.Request) -> web.StreamResponse:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.fetcher_seen.wait(), self.hold_s)
            return web.Response(text=body, content_type="text/html")

        return handler

    def _article(self, body: str) -> Handler:
        async def handler(request: web.Request) -> web.StreamResponse:
            if request.headers.get("User-Agent", "").startswith(self.fetcher_agent):
                self.fetcher_seen.set()
            return web.Response(text=body, content_type="text/html")

        return handler

    def requests_by_time(self) -> list[Seen]:
        return sorted(self.site.requests, key=lambda seen: seen.at)
