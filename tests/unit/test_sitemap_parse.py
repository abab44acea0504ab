"""Sitemap parsing without I/O: kinds, extensions, limits, gzip bombs, hostile XML."""

from __future__ import annotations

import gzip

import pytest

from poller import sitemap_parse
from poller.errors import SitemapRefused
from poller.sitemap_parse import parse_sitemap, sitemaps_in_robots

URLSET = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
 <url><loc>https://e.com/a</loc><lastmod>2030-01-01</lastmod>
  <news:news><news:title>A</news:title>
   <news:publication_date>2030-01-01T10:00:00Z</news:publication_date></news:news>
  <image:image><image:loc>https://e.com/a.jpg</image:loc></image:image></url>
 <url><loc>https://e.com/b</loc></url>
</urlset>"""


def test_urlset_with_news_and_image_extensions() -> None:
    sitemap = parse_sitemap(URLSET)
    assert sitemap.kind == "urlset" and not sitemap.truncated
    first, second = sitemap.urls
    assert (first.loc, first.news_title) == ("https://e.com/a", "A")
    assert first.image_urls == ("https://e.com/a.jpg",)
    assert first.lastmod is not None and first.lastmod.isoformat() == "2030-01-01T00:00:00+00:00"
    assert second.loc == "https://e.com/b" and second.modified_at is None


def test_gzip_and_plain_text() -> None:
    assert [u.loc for u in parse_sitemap(gzip.compress(URLSET)).urls] == [
        "https://e.com/a",
        "https://e.com/b",
    ]
    text = parse_sitemap(b"\xef\xbb\xbfhttps://e.com/1\n\nnot a url\nhttps://e.com/2\n")
    assert text.kind == "text" and [u.loc for u in text.urls] == [
        "https://e.com/1",
        "https://e.com/2",
    ]


def test_gzip_bomb_stops_at_the_byte_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sitemap_parse, "MAX_BYTES", 10_000)
    bomb = gzip.compress(b"https://e.com/x\n" * 1_000_000)  # 16 MB inflated, ~30 KB packed
    sitemap = parse_sitemap(bomb)
    assert sitemap.truncated and len(sitemap.urls) <= 10_000 // 16 + 1


def test_url_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sitemap_parse, "MAX_URLS", 3)
    body = (
        b"<urlset>"
        + b"".join(b"<url><loc>https://e.com/%d</loc></url>" % i for i in range(10))
        + b"</urlset>"
    )
    sitemap = parse_sitemap(body)
    assert sitemap.truncated and len(sitemap.urls) == 3


@pytest.mark.parametrize(
    "body, reason",
    [
        (b"\x1f\x8b\x08\x00garbage", "corrupt gzip"),
        (b"", "empty"),
        (b"<feed><entry/></feed>", "not a sitemap"),
        (
            b'<!DOCTYPE x [<!ENTITY a "aaaa">]><urlset><url><loc>&a;</loc></url></urlset>',
            "declares XML entities",
        ),
        (b'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><urlset/>', "declares XML"),
        # Issue 19, item 11: UTF-7 spells `<` as `+ADw-`, hiding the declaration from a byte search
        (
            b'<?xml version="1.0" encoding="UTF-7"?><!DOCTYPE x [+ADw-!ENTITY a "aaaa">]>'
            b"<urlset><url><loc>https://e.com/&a;</loc></url></urlset>",
            "declares XML entities",
        ),
    ],
)
def test_unusable_sitemaps_are_refused_clearly(body: bytes, reason: str) -> None:
    with pytest.raises(SitemapRefused, match=reason):
        parse_sitemap(body)


def test_robots_sitemap_lines() -> None:
    robots = (
        "User-agent: *\nDisallow: /x\nSitemap: https://e.com/s.xml\nsitemap: https://e.com/s.xml\n"
    )
    assert sitemaps_in_robots(robots) == ["https://e.com/s.xml"]
