"""A news site on one host that every kind of requester crawls at once: the spider walks
its front page and sections, fetchers fetch its articles, and the poller reads its two
feeds (two sources on one host, due at the same instant). A host limits a client as a
whole, whatever process the requests come from (nginx's `limit_req` keys on the client
address), while Scrapy's DOWNLOAD_DELAY holds per crawl process only (scrapy/scrapyd#221:
three crawls of one domain went three times faster than the delay).

`PoliteNewsSite` serves robots.txt (everything allowed, no Crawl-delay), a front page and
sections linking to dated articles with real text, and two RSS feeds listing articles.
`LocalSite` records every request with its arrival time and headers, and every answer with
the time it was written; who sent a request is told by its User-Agent.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

from tests.local_site import Answered, LocalSite

FEEDS = ("/feed-a.xml", "/feed-b.xml")
# The server's own stamps: an arrival is stamped when the test's event loop dispatches the
# request (never before it arrived), an answer's end right after its last byte is handed to
# the socket. Between that write and the stamp, the kernel may run the reader it woke
# first (and on a loaded machine, for milliseconds), so the server runs ahead of the load
# while it stamps (`precise_stamps`).
STAMP_TOLERANCE_S = 0.002


@contextlib.contextmanager
def precise_stamps() -> Iterator[None]:
    """Run this thread, the test site's event loop, ahead of every ordinary process
    (SCHED_FIFO) while the requests come, so that it is not preempted between writing an
    answer and stamping it. SCHED_RESET_ON_FORK: the requesters and burners it starts run
    as ordinary processes, under the load as they would be. Where the system refuses it,
    the stamps are as precise as the load lets them be."""
    policy, param = os.sched_getscheduler(0), os.sched_getparam(0)
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK, os.sched_param(1))
    except OSError:
        yield
        return
    try:
        yield
    finally:
        os.sched_setscheduler(0, policy, param)


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


def feed_xml(site: LocalSite, paths: list[str]) -> str:
    published = datetime(2024, 3, 1, 8, tzinfo=UTC)
    items = "".join(
        f"<item><title>Story {n}</title><link>{site.url(path)}</link>"
        f"<pubDate>{format_datetime(published + timedelta(hours=n))}</pubDate></item>"
        for n, path in enumerate(paths)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
        f"<title>Polite news</title><link>{site.url('/')}</link>{items}</channel></rss>"
    )


class PoliteNewsSite:
    """`sections` section pages under the front page, `articles` articles spread over
    them; each feed lists every other article (the fetchers have them already: its
    entries are duplicates, and only the feed requests are new)."""

    def __init__(self, site: LocalSite, *, sections: int, articles: int) -> None:
        self.site = site
        self.articles = [article_path(n) for n in range(articles)]
        self.sections = [f"/section/{n}" for n in range(1, sections + 1)]
        site.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")
        site.serve("/", listing_html(self.sections + self.articles[:2]))
        for index, section in enumerate(self.sections):
            site.serve(section, listing_html(self.articles[index :: len(self.sections)]))
        for number, path in enumerate(self.articles):
            site.serve(path, article_html(number))
        for offset, feed in enumerate(FEEDS):
            site.serve(
                feed,
                feed_xml(site, self.articles[offset::2]),
                content_type="application/rss+xml; charset=utf-8",
            )

    def answers_by_arrival(self) -> list[Answered]:
        return sorted(self.site.answers, key=lambda answered: answered.request.at)
