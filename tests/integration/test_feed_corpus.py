"""Every corpus feed, fetched from a real local HTTP server and parsed: it parses or is
refused with a clear error, nothing raises; chosen files give exact entry sets, and the
files with an expected-result `.json` give the expected items."""

from __future__ import annotations

import json
import mimetypes
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from poller.entries import html_to_text
from poller.errors import DocumentRefused
from poller.feed_parse import ParsedFeed, parse_feed
from tests.corpus_path import CORPUS
from tests.local_site import LocalSite

FEEDS = CORPUS / "feeds"
FILES = sorted(p for p in FEEDS.rglob("*") if p.is_file())
_HEADER = re.compile(rb"^Header:\s*([A-Za-z-]+):\s*(.*?)\s*$", re.MULTILINE)


def simulated_headers(body: bytes) -> dict[str, str]:
    """The `Header:` lines of a feedparser case's leading comment."""
    head = body[:2000]
    if b"-->" not in head:
        return {}
    comment = head.split(b"-->", 1)[0]
    return {k.decode(): v.decode("latin-1") for k, v in _HEADER.findall(comment)}


def serve_corpus(site: LocalSite) -> None:
    for path in FILES:
        body = path.read_bytes()
        kind = mimetypes.guess_type(path.name)[0] or "application/xml"
        if path.suffix == ".json":
            kind = "application/feed+json"
        headers = {"Content-Type": kind, **simulated_headers(body)}

        async def handler(
            _request: web.Request, body: bytes = body, headers: dict[str, str] = headers
        ) -> web.Response:
            return web.Response(body=body, headers=headers)

        site.route("/" + str(path.relative_to(FEEDS)), handler)


@pytest.fixture
async def corpus_site(local_site: LocalSite) -> AsyncIterator[LocalSite]:
    serve_corpus(local_site)
    yield local_site


@pytest.fixture
async def client() -> AsyncIterator[SafeClient]:
    async with SafeClient(HttpLimits("frontier-test/1", allow_private_networks=True)) as c:
        yield c


async def fetch_and_parse(client: SafeClient, site: LocalSite, relative: str) -> ParsedFeed:
    response = await client.get(site.url("/" + relative))
    assert response.status == 200
    return parse_feed(response.body, response.headers, response.url)


async def test_every_corpus_feed_parses_or_is_refused_clearly(
    corpus_site: LocalSite, client: SafeClient
) -> None:
    parsed, refused = 0, 0
    for path in FILES:
        relative = str(path.relative_to(FEEDS))
        try:
            feed = await fetch_and_parse(client, corpus_site, relative)
        except DocumentRefused as exc:
            refused += 1
            assert str(exc), relative
            continue
        parsed += 1
        assert feed.items_seen == len(feed.entries) + len(feed.skipped), relative
        for entry in feed.entries:
            assert entry.url.startswith(("http://", "https://")), relative
    assert parsed >= 150 and refused >= 1


async def test_chosen_feeds_give_exact_entry_sets(
    corpus_site: LocalSite, client: SafeClient
) -> None:
    relurl = await fetch_and_parse(client, corpus_site, "feed-rs/rss2/rss_2.0_relurl_1.xml")
    assert [e.url for e in relurl.entries] == [
        "https://insanity.industries/post/pareto-optimal-compression/",
        "https://insanity.industries/post/pacman-tracking-leftover-packages/",
    ]
    commons = await fetch_and_parse(client, corpus_site, "crawler-commons/feed.rss")
    assert [(e.url, e.title) for e in commons.entries] == [
        ("https://www.example.com/blog/post/1", "Example entry"),
        ("https://www.example.com/guid.html", "&guid& element instead of &link&"),
        ("https://www.example.com/foo?q=a&l=en", "XML entity in link content"),
        ("https://www.example.com/foo?q=a&l=fr", "CDATA"),
    ]
    assert commons.entries[0].published_at is not None
    assert commons.entries[0].published_at.isoformat() == "2009-09-06T16:20:00+00:00"
    # A relative Atom link resolves against the document's own URL.
    relative = await fetch_and_parse(client, corpus_site, "feed-rs/atom/atom_relative.xml")
    assert [e.url for e in relative.entries] == [corpus_site.url("/blog/2003/12/13/atom03")]
    docuri = await fetch_and_parse(
        client, corpus_site, "feedparser/wellformed/base/http_item_link_base_docuri.xml"
    )
    assert [e.url for e in docuri.entries] == [corpus_site.url("/relative/uri")]
    spec = await fetch_and_parse(client, corpus_site, "feed-rs/jsonfeed/jsonfeed_spec_1.json")
    assert [(e.url, e.title, str(e.published_at)) for e in spec.entries] == [
        (
            "https://jsonfeed.org/2017/05/17/announcing_json_feed",
            "Announcing JSON Feed",
            "2017-05-17 08:02:12-07:00",
        ),
    ]
    trafilatura = await fetch_and_parse(client, corpus_site, "trafilatura/feed.json")
    assert len(trafilatura.entries) == 25 and len({e.url for e in trafilatura.entries}) == 25


def expected_pairs() -> list[tuple[Path, Path]]:
    pairs = []
    for expected in sorted(FEEDS.glob("gofeed/*/*.json")):
        source = expected.with_suffix(".xml")
        if source.exists():
            pairs.append((source, expected))
    return pairs


async def test_feeds_with_expected_results_give_the_expected_items(
    corpus_site: LocalSite, client: SafeClient
) -> None:
    checked = 0
    for source, expected_file in expected_pairs():
        expected = json.loads(expected_file.read_text())
        items = expected.get("items") or expected.get("entries") or []
        feed = await fetch_and_parse(client, corpus_site, str(source.relative_to(FEEDS)))
        assert feed.items_seen == len(items), source.name
        titles = [e.title for e in feed.entries] + [
            html_to_text(s.title) or None for s in feed.skipped
        ]
        for item in items:
            if item.get("title"):
                assert html_to_text(item["title"]) in titles, source.name
        if expected.get("title"):
            assert html_to_text(feed.title) == html_to_text(expected["title"]), source.name
        checked += 1
    assert checked >= 30
