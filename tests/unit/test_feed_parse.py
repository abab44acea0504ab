"""Feed parsing without I/O: hostile XML refused without expansion, entry normalisation,
JSON Feed, per-source filters."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from frontier.xml_entities import entity_problem
from poller.entries import ContentQuality, Entry, html_to_text
from poller.errors import DocumentRefused
from poller.feed_parse import parse_feed
from poller.filters import EntryFilter

URL = "https://example.com/feed.xml"

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE rss [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<rss version="2.0"><channel><title>&lol3;</title>
<item><title>&lol3;</title><link>https://example.com/a</link></item></channel></rss>"""

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<rss version="2.0"><channel><item><title>&xxe;</title>
<link>https://example.com/a</link></item></channel></rss>"""


@pytest.mark.parametrize("body", [BILLION_LAUGHS, XXE, XXE.decode().encode("utf-16")])
def test_hostile_xml_is_refused_without_expansion(body: bytes) -> None:
    with pytest.raises(DocumentRefused, match="declares XML entities"):
        parse_feed(body, {"Content-Type": "application/rss+xml"}, URL)


def _utf7(text: str) -> bytes:
    """`text` in UTF-7 with each `<` spelled `+ADw-`: not one ASCII `<` left to find."""
    return text.encode("utf-7").replace(b"<", b"+ADw-")


def _laughs(depth: int) -> str:
    chain = "".join(f'<!ENTITY e{n + 1} "' + f"&e{n};" * 10 + '">' for n in range(depth))
    return (
        f'<!DOCTYPE rss [<!ENTITY e0 "xxxxxxxxxx">{chain}]><rss version="2.0"><channel>'
        f"<title>&e{depth};</title><item><title>t</title><link>https://example.com/a</link>"
        "</item></channel></rss>"
    )


UTF7_LAUGHS = b'<?xml version="1.0" encoding="UTF-7"?>' + _utf7(_laughs(5))
EBCDIC_LAUGHS = '<?xml version="1.0" encoding="cp037"?>'.encode("cp037") + _laughs(5).encode(
    "cp037"
)


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (UTF7_LAUGHS, {}),
        (UTF7_LAUGHS, {"Content-Type": "application/rss+xml"}),
        (_utf7(_laughs(5)), {"Content-Type": "application/xml; charset=utf-7"}),
        (EBCDIC_LAUGHS, {"Content-Type": "application/rss+xml"}),
        (EBCDIC_LAUGHS, {}),
    ],
    ids=["utf7-declared", "utf7-declared-rss", "utf7-http-charset", "ebcdic-rss", "ebcdic"],
)
def test_entities_hidden_by_an_ascii_incompatible_encoding_are_refused(
    body: bytes, headers: dict[str, str]
) -> None:
    # Issue 19, item 11: a 760-byte UTF-7 feed gave a 1,000,000-character title.
    assert len(body) < 1100
    with pytest.raises(DocumentRefused, match="declares XML entities"):
        parse_feed(body, headers, URL)


def test_a_feed_declaring_a_bogus_encoding_is_still_read() -> None:
    # No parser here reads "x-bogus" (feedparser and lxml fall back), so nothing is hidden.
    body = (
        b'<?xml version="1.0" encoding="x-bogus"?><rss version="2.0"><channel><item>'
        b"<link>https://example.com/a</link></item></channel></rss>"
    )
    feed = parse_feed(body, {"Content-Type": "application/rss+xml"}, URL)
    assert [e.url for e in feed.entries] == ["https://example.com/a"]


def test_an_ebcdic_or_utf7_feed_without_entities_is_still_read() -> None:
    text = (
        '<rss version="2.0"><channel><title>T</title><item><title>A</title>'
        "<link>https://example.com/a</link></item></channel></rss>"
    )
    for body in (
        '<?xml version="1.0" encoding="cp037"?>'.encode("cp037") + text.encode("cp037"),
        b'<?xml version="1.0" encoding="UTF-7"?>' + _utf7(text),
    ):
        feed = parse_feed(body, {"Content-Type": "application/rss+xml"}, URL)
        assert [e.url for e in feed.entries] == ["https://example.com/a"]


def test_a_netscape_doctype_without_entities_is_fine() -> None:
    body = b"""<?xml version="1.0"?>
<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN"
 "http://my.netscape.com/publish/formats/rss-0.91.dtd">
<rss version="0.91"><channel><title>t</title>
<item><title>A</title><link>https://example.com/a</link></item></channel></rss>"""
    feed = parse_feed(body, {}, URL)
    assert [e.url for e in feed.entries] == ["https://example.com/a"]


def test_entries_are_normalised_deduplicated_and_resolved() -> None:
    words = " ".join(["word"] * 250)
    body = f"""<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://example.com/blog/">
 <title>Blog</title>
 <entry><title type="html">&lt;b&gt;Bold&lt;/b&gt; &amp;amp; more</title>
  <link href="posts/1"/><updated>2030-01-02T03:04:05Z</updated>
  <author><name>Ann</name></author>
  <summary type="html">&lt;p&gt;Short &lt;img src="/i.png"&gt; text&lt;/p&gt;</summary></entry>
 <entry><title>Again</title><link href="posts/1"/></entry>
 <entry><title>Long</title><link href="https://other.example/x"/>
  <content type="html">&lt;p&gt;{words}&lt;/p&gt;</content></entry>
 <entry><title>No link at all</title></entry>
</feed>""".encode()
    feed = parse_feed(body, {"Content-Type": "application/atom+xml"}, URL)
    assert feed.items_seen == 4
    first, long = feed.entries
    assert first.url == "https://example.com/blog/posts/1"
    assert first.title == "Bold & more" and first.author == "Ann"
    assert first.summary == "Short text"
    assert first.image_url == "https://example.com/i.png"
    assert first.published_at == datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert first.content_quality is ContentQuality.STUB
    assert long.content_quality is ContentQuality.FULL
    assert [s.reason for s in feed.skipped] == ["repeated within the feed", "no link"]


def test_json_feed() -> None:
    body = b"""{"version": "https://jsonfeed.org/version/1.1", "title": "J",
      "items": [{"id": "1", "url": "/p/1", "title": "One", "content_html": "<p>Hi</p>",
                 "date_published": "2030-01-01T00:00:00Z", "authors": [{"name": "Bo"}],
                 "image": "https://example.com/1.jpg"},
                {"id": "2", "title": "No URL"}]}"""
    feed = parse_feed(body, {"Content-Type": "application/feed+json"}, URL)
    assert feed.kind == "json" and feed.items_seen == 2
    assert feed.entries == [
        Entry(
            url="https://example.com/p/1",
            title="One",
            summary="Hi",
            author="Bo",
            published_at=datetime(2030, 1, 1, tzinfo=UTC),
            image_url="https://example.com/1.jpg",
            content_quality=ContentQuality.STUB,
        )
    ]


@pytest.mark.parametrize("body", [b"", b"<html><body>hi</body></html>", b"{not json", b"[1]"])
def test_non_feeds_are_refused_clearly(body: bytes) -> None:
    with pytest.raises(DocumentRefused):
        parse_feed(body, {}, URL)


def entry(url: str, title: str = "", published: datetime | None = None) -> Entry:
    return Entry(url=url, title=title, published_at=published)


def test_filters() -> None:
    d = [datetime(2030, 1, day, tzinfo=UTC) for day in range(1, 6)]
    entries = [
        entry("https://e.com/news/1", "Budget vote", d[0]),
        entry("https://e.com/sport/2", "Match", d[1]),
        entry("https://e.com/news/3", "Sponsored budget", d[2]),
        entry("https://e.com/news/4", "Budget undated"),
    ]
    only_news = EntryFilter.from_source({"include": ["/news/"], "exclude_keywords": ["sponsored"]})
    assert [e.url[-1] for e in only_news.apply(entries)] == ["1", "4"]
    keywords = EntryFilter.from_source({"keywords": ["budget"]}, min_published_at=d[1])
    assert [e.url[-1] for e in keywords.apply(entries)] == ["3", "4"]  # undated kept
    newest = EntryFilter.from_source({"most_recent": 2})
    assert [e.url[-1] for e in newest.apply(entries)] == ["3", "4"]
    with pytest.raises(DocumentRefused, match="bad regex"):
        EntryFilter.from_source({"include": ["("]})
    with pytest.raises(DocumentRefused, match="unknown keys"):
        EntryFilter.from_source({"inclde": []})


def test_html_to_text_decodes_entities_and_keeps_plain_less_than() -> None:
    assert html_to_text("Fish &amp; Chips &lt;3") == "Fish & Chips <3"
    assert html_to_text("<p>A <script>x()</script>b</p>") == "A b"


@pytest.mark.parametrize("name", ["a\x00b", "utf-8\n", "x" * 200, "", "8bit"])
def test_an_encoding_name_xml_does_not_allow_is_not_looked_up(name: str) -> None:
    """Found by Hypothesis: a NUL in the declared name crashed codecs.lookup."""
    body = f'<?xml version="1.0" encoding="{name}"?><rss><channel/></rss>'.encode("latin-1")
    assert entity_problem(body, http_charset=name) is None
