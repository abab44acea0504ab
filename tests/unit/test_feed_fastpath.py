"""The lxml fast path gives exactly feedparser's result wherever it accepts a feed: every
corpus feed goes through both paths, under the content type the corpus test serves it
with and under common alternatives, and the parsed feeds are compared field by field."""

from __future__ import annotations

import mimetypes
import re
from pathlib import Path

import pytest

from bench.poll import feed_body
from poller.errors import DocumentRefused
from poller.feed_parse import (
    ParsedFeed,
    parse_feed,
    parse_with_fast_path,
    parse_with_feedparser,
)
from tests.corpus_path import CORPUS

FEEDS = CORPUS / "feeds"
FILES = sorted(p for p in FEEDS.rglob("*") if p.is_file())
URL = "http://127.0.0.1:8080/corpus/feed.xml"
_HEADER = re.compile(rb"^Header:\s*([A-Za-z-]+):\s*(.*?)\s*$", re.MULTILINE)


def header_variants(path: Path, body: bytes) -> list[dict[str, str]]:
    served = {"content-type": mimetypes.guess_type(path.name)[0] or "application/xml"}
    head = body[:2000]
    if b"-->" in head:
        comment = head.split(b"-->", 1)[0]
        served.update(
            {k.decode().lower(): v.decode("latin-1") for k, v in _HEADER.findall(comment)}
        )
    return [
        served,
        {"content-type": "application/rss+xml"},
        {"content-type": "text/xml; charset=utf-8"},
        {"content-type": "text/xml"},
        {},
    ]


def both(body: bytes, headers: dict[str, str]) -> tuple[ParsedFeed | None, ParsedFeed | None]:
    """(fast-path result or None, feedparser result or None when refused)."""
    lowered = {**headers, "content-location": URL}
    fast_parsed = parse_with_fast_path(body, lowered, URL)
    try:
        slow = parse_with_feedparser(body, lowered, URL)
    except DocumentRefused:
        slow = None
    return fast_parsed, slow


def test_fast_path_matches_feedparser_on_every_corpus_feed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    accepted_files: set[str] = set()
    compared = 0
    for path in FILES:
        body = path.read_bytes()
        if not body.strip() or path.suffix == ".json" or re.search(rb"<!ENTITY", body, re.I):
            continue
        for headers in header_variants(path, body):
            fast, slow = both(body, headers)
            compared += 1
            if fast is None:
                continue
            name = f"{path.relative_to(FEEDS)} {headers}"
            assert slow is not None, name
            assert slow.problem is None, name
            assert fast.entries == slow.entries, name
            assert fast.skipped == slow.skipped, name
            assert (fast.kind, fast.title, fast.ttl, fast.items_seen) == (
                slow.kind,
                slow.title,
                slow.ttl,
                slow.items_seen,
            ), name
            accepted_files.add(str(path.relative_to(FEEDS)))
    with capsys.disabled():
        print(
            f"\nfast path: {len(accepted_files)} of {len(FILES)} corpus files accepted "
            f"under at least one header set ({compared} parses compared)"
        )
    assert len(accepted_files) >= 20


def test_the_benchmark_feed_takes_the_fast_path() -> None:
    body = feed_body(7, "127.0.0.3:8080")
    headers = {"content-type": "application/rss+xml; charset=utf-8"}
    fast, slow = both(body, headers)
    assert fast is not None and slow is not None
    assert fast.entries == slow.entries and len(fast.entries) == 20
    assert fast.entries[0].image_url == "http://127.0.0.3:8080/img/1.jpg"
    assert parse_feed(body, headers, URL).entries == slow.entries


@pytest.mark.parametrize(
    "body",
    [
        b'<rss version="2.0"><channel><item><title>a<b>x</b></title>'
        b"<link>http://e.com/a</link></item></channel></rss>",  # markup in a text field
        b'<rss version="2.0"><channel xml:base="http://other/"><item>'
        b"<link>a</link></item></channel></rss>",  # xml:base
        b'<rss version="0.91"><channel><item><link>http://e.com/a</link></item></channel></rss>',
        b'<rss version="2.0"><channel><item><link>http://e.com/a</link>'
        b"<link>http://e.com/b</link></item></channel></rss>",  # a repeated field
        b'<rss version="2.0"><channel><item><foo:bar xmlns:foo="urn:x">1</foo:bar>'
        b"<link>http://e.com/a</link></item></channel></rss>",  # an unmapped element
        b'<rss version="2.0"><channel><item><link>http://e.com/a</link></item>'
        b"</channel></rs>",  # malformed
        '<?xml version="1.0" encoding="iso-8859-1"?><rss version="2.0"><channel><item>'
        "<title>caf\xe9</title><link>http://e.com/a</link></item></channel></rss>".encode(
            "latin-1"
        ),  # another encoding
    ],
)
def test_what_the_fast_path_is_unsure_of_goes_to_feedparser(body: bytes) -> None:
    fast, slow = both(body, {"content-type": "application/rss+xml"})
    assert fast is None
    assert slow is not None
