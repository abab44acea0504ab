"""The four demo sites and the servers that serve them on loopback addresses.

- Harbour Gazette (127.0.0.2): RSS 2.0 at `/feed.xml`; robots.txt `Disallow: /members/`
  (one feed item is there), a feed item that 301-redirects, a feed item that is a 404.
- Lantern Tech Blog (127.0.0.3): Atom at `/atom.xml`; a syndicated copy of a Gazette
  article (the same body under a second URL: duplicate content).
- Valley Courier (127.0.0.4): no feed, a sitemap at `/sitemap.xml`, named in robots.txt.
- Meadow Notes (127.0.0.5): no feed and no sitemap, for the discovery spider; robots.txt
  `Disallow: /drafts/` (the home page links a draft) and non-article pages.

Each site binds a free port. Where 127.0.0.2-5 cannot be bound (some systems route only
127.0.0.1), the site falls back to 127.0.0.1; its port still makes it a host of its own.
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from frontier_cli.demo.content import (
    Article,
    article_page,
    atom,
    listing_page,
    make_article,
    robots,
    rss,
    sitemap,
)

log = logging.getLogger(__name__)

HTML = "text/html; charset=utf-8"
RATE_LIMIT_MS = 200  # the demo sources' per-host delay: polite, and quick to watch


@dataclass(frozen=True, slots=True)
class Page:
    body: str = ""
    content_type: str = HTML
    status: int = 200
    location: str | None = None


@dataclass(frozen=True, slots=True)
class Built:
    """What a site serves, and the source that registers it."""

    pages: dict[str, Page]
    source: dict[str, Any]  # a sources YAML entry (see frontier.source_specs)


def _articles(specs: list[tuple[str, str, str, str]], now: datetime) -> list[Article]:
    return [
        make_article(slug, title, topic, author, age_hours=3 + 5 * i, now=now)
        for i, (slug, title, topic, author) in enumerate(specs)
    ]


GAZETTE = [
    ("new-breakwater-approved", "Council approves the new breakwater", "breakwater", "Ada Fenwick"),
    ("fish-market-reopens", "The fish market reopens after renovation", "fish market", "Tom Hale"),
    ("ferry-timetable-changes", "Winter ferry timetable changes", "ferry timetable", "Ada Fenwick"),
    ("school-roof-repairs", "School roof repairs finish early", "school roof", "Mina Ortiz"),
    ("regatta-returns", "The summer regatta returns", "regatta", "Tom Hale"),
    ("library-extends-hours", "Library extends its opening hours", "library hours", "Mina Ortiz"),
]


def gazette(origin: str, now: datetime) -> Built:
    """RSS, with a robots-blocked item, a redirected item and a missing one."""
    articles = _articles(GAZETTE, now)
    members = make_article(
        "harbour-budget-briefing",
        "Members' briefing on the harbour budget",
        "harbour budget",
        "Ada Fenwick",
        2,
        now=now,
    )
    pages = {f"/news/{a.slug}": Page(article_page("Harbour Gazette", a)) for a in articles}
    pages[f"/members/{members.slug}"] = Page(article_page("Harbour Gazette", members))
    # The feed still links the timetable story's old address, which now redirects.
    moved = "/news/ferry-timetable-changes-2024"
    pages[moved] = Page(status=301, location=f"{origin}/news/ferry-timetable-changes")
    items = [
        (f"{origin}/news/{a.slug}", a) for a in articles if a.slug != "ferry-timetable-changes"
    ]
    timetable = next(a for a in articles if a.slug == "ferry-timetable-changes")
    withdrawn = make_article(
        "lighthouse-restoration-postponed",
        "Lighthouse restoration postponed",
        "lighthouse",
        "Tom Hale",
        30,
        now=now,
    )
    items += [
        (f"{origin}{moved}", timetable),
        (f"{origin}/members/{members.slug}", members),
        (f"{origin}/news/{withdrawn.slug}", withdrawn),
    ]  # the last is a 404
    pages["/feed.xml"] = Page(
        rss("Harbour Gazette", f"{origin}/", items), "application/rss+xml; charset=utf-8"
    )
    pages["/robots.txt"] = Page(robots(["/members/"]), "text/plain; charset=utf-8")
    pages["/"] = Page(
        listing_page(
            "Harbour Gazette", "Latest news", [(f"/news/{a.slug}", a.title) for a in articles]
        )
    )
    source = {
        "name": "demo: Harbour Gazette",
        "feed_url": f"{origin}/feed.xml",
        "base_url": f"{origin}/",
        "priority": 6,
        "rate_limit_ms": RATE_LIMIT_MS,
        "feed_poll_interval_minutes": 5,
    }
    return Built(pages, source)


LANTERN = [
    (
        "why-we-moved-to-postgres",
        "Why we moved our queue to PostgreSQL",
        "queue migration",
        "Iris Chen",
    ),
    ("polite-crawling", "Notes on polite crawling", "crawler politeness", "Iris Chen"),
    ("feeds-are-not-dead", "Feeds are not dead", "feed reader", "Sam Okafor"),
    ("sitemaps-in-practice", "Sitemaps in practice", "sitemap", "Sam Okafor"),
    ("on-call-diary", "An on-call diary", "on-call rota", "Iris Chen"),
]


def lantern(origin: str, now: datetime, syndicated: tuple[str, str] | None) -> Built:
    """Atom, plus a syndicated copy of another site's article: the same body under a second
    URL, which the fetcher marks as duplicate content. `syndicated`: (original page, slug)."""
    articles = _articles(LANTERN, now)
    pages = {f"/posts/{a.slug}": Page(article_page("Lantern Tech Blog", a)) for a in articles}
    items = [(f"{origin}/posts/{a.slug}", a) for a in articles]
    if syndicated is not None:
        body, slug = syndicated
        pages[f"/posts/syndicated-{slug}"] = Page(body)
        copy = next(a for a in _articles(GAZETTE, now) if a.slug == slug)
        items.append((f"{origin}/posts/syndicated-{slug}", copy))
    feed_url = f"{origin}/atom.xml"
    pages["/atom.xml"] = Page(
        atom("Lantern Tech Blog", f"{origin}/", feed_url, items),
        "application/atom+xml; charset=utf-8",
    )
    pages["/robots.txt"] = Page(robots([]), "text/plain; charset=utf-8")
    pages["/"] = Page(
        listing_page(
            "Lantern Tech Blog", "Posts", [(f"/posts/{a.slug}", a.title) for a in articles]
        )
    )
    source = {
        "name": "demo: Lantern Tech Blog",
        "feed_url": feed_url,
        "priority": 5,
        "rate_limit_ms": RATE_LIMIT_MS,
        "feed_poll_interval_minutes": 5,
    }
    return Built(pages, source)


COURIER = [
    ("valley-road-resurfaced", "Valley road to be resurfaced", "road resurfacing", "Ruth Ames"),
    ("orchard-harvest", "A record orchard harvest", "orchard harvest", "Ben Castle"),
    ("new-bus-route", "A new bus route links the villages", "bus route", "Ruth Ames"),
    ("flood-defences", "Flood defences tested", "flood defence", "Ben Castle"),
    ("farmers-market", "Farmers' market moves to the square", "farmers' market", "Ruth Ames"),
    ("choir-competition", "Village choir wins competition", "choir", "Ben Castle"),
]


def courier(origin: str, now: datetime) -> Built:
    """No feed: a sitemap, announced in robots.txt."""
    articles = _articles(COURIER, now)
    pages = {f"/stories/{a.slug}": Page(article_page("Valley Courier", a)) for a in articles}
    entries = [(f"{origin}/stories/{a.slug}", a.published) for a in articles]
    pages["/sitemap.xml"] = Page(sitemap(entries), "application/xml; charset=utf-8")
    pages["/robots.txt"] = Page(robots([], f"{origin}/sitemap.xml"), "text/plain; charset=utf-8")
    source = {
        "name": "demo: Valley Courier",
        "sitemap_url": f"{origin}/sitemap.xml",
        "priority": 5,
        "rate_limit_ms": RATE_LIMIT_MS,
    }
    return Built(pages, source)


MEADOW = [
    ("first-frost", "The first frost", "garden frost", "Lena Park"),
    ("seed-swap", "Notes from the seed swap", "seed swap", "Lena Park"),
    ("beekeeping-course", "A beekeeping course", "beekeeping", "Olu Grant"),
    ("hedgerow-survey", "The hedgerow survey", "hedgerow survey", "Olu Grant"),
    ("pond-dipping", "Pond dipping with the school", "pond", "Lena Park"),
    ("compost-trial", "Our compost trial", "compost", "Olu Grant"),
    ("apple-day", "Apple day at the orchard", "apple day", "Lena Park"),
]


def meadow(origin: str, now: datetime) -> Built:
    """No feed and no sitemap: the spider walks the home page and the archive."""
    articles = _articles(MEADOW, now)
    pages = {f"/notes/{a.slug}": Page(article_page("Meadow Notes", a)) for a in articles}
    recent, older = articles[:4], articles[4:]
    draft = make_article(
        "draft-winter-plans", "Draft: winter plans", "winter plan", "Lena Park", 1, now=now
    )
    pages[f"/drafts/{draft.slug}"] = Page(article_page("Meadow Notes", draft))
    home_links = [(f"/notes/{a.slug}", a.title) for a in recent]
    home_links += [
        ("/archive", "Older notes"),
        ("/about", "About these notes"),
        (f"/drafts/{draft.slug}", draft.title),
    ]
    pages["/"] = Page(listing_page("Meadow Notes", "Meadow Notes", home_links))
    pages["/archive"] = Page(
        listing_page("Meadow Notes", "Archive", [(f"/notes/{a.slug}", a.title) for a in older])
    )
    pages["/about"] = Page(listing_page("Meadow Notes", "About", [("/", "Back home")]))
    pages["/robots.txt"] = Page(robots(["/drafts/"]), "text/plain; charset=utf-8")
    source = {
        "name": "demo: Meadow Notes",
        "base_url": f"{origin}/",
        "ingestion_mode": "spider",
        "article_url_patterns": [r"/notes/[a-z0-9-]+$"],
        "priority": 4,
        "rate_limit_ms": RATE_LIMIT_MS,
    }
    return Built(pages, source)


@dataclass
class DemoSite:
    """One site: an aiohttp server on `address` whose pages are filled in once its port is
    known (feeds and sitemaps carry absolute URLs)."""

    key: str
    address: str
    port: int = 0
    pages: dict[str, Page] = field(default_factory=dict)
    hits: int = 0
    _runner: web.AppRunner | None = None

    @property
    def origin(self) -> str:
        return f"http://{self.address}:{self.port}"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.hits += 1
        page = self.pages.get(request.path)
        if page is None:
            return web.Response(status=404, text="not found on this demo site")
        headers = {"Location": page.location} if page.location else None
        return web.Response(
            status=page.status,
            body=page.body.encode(),
            headers=headers,
            content_type=page.content_type.split(";")[0],
            charset="utf-8" if page.body else None,
        )

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        try:
            await web.TCPSite(self._runner, self.address, 0).start()
        except OSError as exc:
            if exc.errno != errno.EADDRNOTAVAIL:
                raise
            log.warning("cannot bind %s; the demo site %s uses 127.0.0.1", self.address, self.key)
            self.address = "127.0.0.1"
            await web.TCPSite(self._runner, self.address, 0).start()
        self.port = self._runner.addresses[-1][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


SITES: tuple[tuple[str, str], ...] = (
    ("gazette", "127.0.0.2"),
    ("lantern", "127.0.0.3"),
    ("courier", "127.0.0.4"),
    ("meadow", "127.0.0.5"),
)


@dataclass
class DemoSites:
    """All four sites, started together; `sources` are their registrations."""

    sites: dict[str, DemoSite]
    sources: list[dict[str, Any]]

    @classmethod
    async def start(cls, *, now: Callable[[], datetime] | None = None) -> DemoSites:
        sites = {key: DemoSite(key, address) for key, address in SITES}
        try:
            for site in sites.values():
                await site.start()
        except BaseException:
            for site in sites.values():
                await site.stop()
            raise
        at = (now or (lambda: datetime.now(UTC)))()
        built = build({key: site.origin for key, site in sites.items()}, at)
        for key, result in built.items():
            sites[key].pages = result.pages
        return cls(sites, [result.source for result in built.values()])

    @property
    def hits(self) -> int:
        return sum(site.hits for site in self.sites.values())

    async def stop(self) -> None:
        for site in self.sites.values():
            await site.stop()


def build(origins: Mapping[str, str], now: datetime) -> dict[str, Built]:
    """Every site's pages and source, given each site's origin."""
    built = {
        "gazette": gazette(origins["gazette"], now),
        "courier": courier(origins["courier"], now),
        "meadow": meadow(origins["meadow"], now),
    }
    syndicated = built["gazette"].pages["/news/regatta-returns"].body
    built["lantern"] = lantern(origins["lantern"], now, (syndicated, "regatta-returns"))
    return built
