"""The metadata pages declare (`fetcher.metadata`), on the shapes real CMSes emit, and the
future-date rule; then `fetcher.extract.extract` keeping declared times and paying for
trafilatura's metadata pass only when something is missing. Without I/O."""

from __future__ import annotations

import gzip
import html
import json
import re
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
import trafilatura
from selectolax.lexbor import LexborHTMLParser

from fetcher.encoding import decode_html
from fetcher.extract import extract
from fetcher.metadata import (
    FUTURE_SKEW,
    PageMeta,
    _clean,
    parse_date,
    plausible_date,
    read_metadata,
)
from tests.corpus_path import CORPUS

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)
BODY = "<article><h1>{title}</h1>" + "<p>{words}</p>" * 6 + "</article>"
WORDS = " ".join(f"wort{i}" for i in range(80))


def page(head: str, *, lang: str = "en", body: str | None = None) -> str:
    return (
        f"<!doctype html><html lang='{lang}'><head>{head}</head><body>"
        f"<nav>Home News Sport</nav>{body or BODY.format(title='Heading', words=WORDS)}"
        "<footer>Copyright</footer></body></html>"
    )


def ld(value: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(value)}</script>'


def read(html: str, now: datetime = NOW) -> PageMeta:
    return read_metadata(LexborHTMLParser(html), now=now)


def test_wordpress_yoast_graph_with_references_by_id() -> None:
    """Yoast SEO's @graph: the Article names its author by @id (a Person node), the
    WebPage holds the date and the primary image by @id (developer.yoast.com schema pieces)."""
    site = "https://blog.example/"
    graph = {
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "Organization", "@id": f"{site}#organization", "name": "Example Blog"},
            {"@type": "ImageObject", "@id": f"{site}post/#primaryimage", "url": f"{site}a.jpg"},
            {
                "@type": "WebPage",
                "@id": f"{site}post/",
                "name": "The post - Example Blog",
                "datePublished": "2024-03-05T08:00:00+00:00",
                "primaryImageOfPage": {"@id": f"{site}post/#primaryimage"},
                "inLanguage": "en-US",
            },
            {
                "@type": "Article",
                "@id": f"{site}post/#article",
                "headline": "The post",
                "author": {"@id": f"{site}#/schema/person/4f2a"},
                "isPartOf": {"@id": f"{site}post/"},
            },
            {"@type": "Person", "@id": f"{site}#/schema/person/4f2a", "name": "Jane Doe"},
        ],
    }
    meta = read(page(ld(graph) + "<title>The post - Example Blog</title>", lang="en-US"))
    assert (meta.title, meta.author, meta.image_url) == ("The post", "Jane Doe", f"{site}a.jpg")
    assert meta.published_at == datetime(2024, 3, 5, 8, 0, tzinfo=UTC)
    assert meta.language == "en-US"


def test_ghost_article_with_person_and_image_objects() -> None:
    """Ghost's ghost_head: one Article with author and image as objects, a UTC date with
    milliseconds (TryGhost/SDK schema-org)."""
    article = {
        "@context": "https://schema.org",
        "@type": "Article",
        "publisher": {"@type": "Organization", "name": "Ghost Blog"},
        "author": {"@type": "Person", "name": "Ana Li", "image": {"@type": "ImageObject"}},
        "headline": "Shipping Ghost 6",
        "datePublished": "2025-06-01T08:00:00.000Z",
        "image": {"@type": "ImageObject", "url": "https://g.example/content/hero.png"},
        "description": "What changed.",
        "mainEntityOfPage": "https://g.example/ghost-6/",
    }
    meta = read(page(ld(article)))
    assert meta.published_at == datetime(2025, 6, 1, 8, 0, tzinfo=UTC)
    assert meta.published_at.hour == 8  # type: ignore[union-attr]
    assert (meta.author, meta.image_url, meta.summary) == (
        "Ana Li",
        "https://g.example/content/hero.png",
        "What changed.",
    )


def test_drupal_schema_metatag_news_article_with_several_authors() -> None:
    """Drupal's schema_metatag: a @graph holding a NewsArticle, authors as a list, an
    offset written without a colon, @type as a list."""
    graph = {
        "@context": "https://schema.org",
        "@graph": [
            {
                "@type": ["NewsArticle"],
                "headline": "Council votes",
                "author": [
                    {"@type": "Person", "name": "Max Muster"},
                    {"@type": "Person", "name": "Eva Beispiel"},
                ],
                "datePublished": "2024-11-18T10:30:00+0100",
                "image": ["https://d.example/1.jpg", "https://d.example/2.jpg"],
            }
        ],
    }
    meta = read(page(ld(graph), lang="de"))
    assert meta.author == "Max Muster; Eva Beispiel"
    assert meta.published_at is not None
    assert meta.published_at.utcoffset() == timedelta(hours=1) and meta.published_at.hour == 10
    assert (meta.image_url, meta.language) == ("https://d.example/1.jpg", "de")


def test_django_meta_open_graph_without_json_ld() -> None:
    """django-meta / djangocms-page-meta: OpenGraph and article:* tags, article:author as
    a profile URL, the name in <meta name=author> (nephila/djangocms-page-meta docs)."""
    head = (
        '<meta property="og:title" content="Spring fair opens">'
        '<meta property="og:image" content="https://dj.example/media/fair.jpg">'
        '<meta property="article:published_time" content="2024-02-01T09:30:00+01:00">'
        '<meta property="article:author" content="https://www.facebook.com/someone">'
        '<meta name="author" content="Lea Roth">'
        '<meta name="description" content="The fair is open.">'
        "<title>Spring fair opens | City News</title>"
    )
    meta = read(page(head))
    assert (meta.title, meta.author, meta.summary) == (
        "Spring fair opens",
        "Lea Roth",
        "The fair is open.",
    )
    assert meta.published_at == datetime(2024, 2, 1, 9, 30, tzinfo=timezone(timedelta(hours=1)))
    assert meta.image_url == "https://dj.example/media/fair.jpg"


def test_news_site_open_graph_before_the_seo_headline_and_escaped_twice() -> None:
    """News sites: og:title is the editorial headline, the JSON-LD headline the search
    one (as trafilatura reads them); CMSes escape apostrophes twice (&amp;#39;)."""
    head = (
        '<meta property="og:title" content="Investors don&amp;#39;t know what to make of it">'
        + ld({"@type": "NewsArticle", "headline": "Markets latest", "author": "By Sam Poe"})
        + '<meta property="og:locale" content="en_GB">'
    )
    meta = read(page(head, lang=""))
    assert meta.title == "Investors don't know what to make of it"
    assert meta.author == "Sam Poe"
    assert meta.language == "en-GB"


def test_time_element_and_title_when_nothing_else_is_declared() -> None:
    body = (
        "<article><h1>Only heading</h1><time datetime='2023-04-05T06:07:08-04:00'>April 5"
        f"</time><p>{WORDS}</p></article>"
    )
    meta = read(page("<title>Only heading - Site</title>", body=body))
    assert meta.title == "Only heading"
    assert meta.published_at == datetime(2023, 4, 5, 10, 7, 8, tzinfo=UTC)
    assert meta.published_at.utcoffset() == timedelta(hours=-4)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "script",
    [
        # a theme template leaving a trailing comma (halo-theme-material structured-data)
        '{"@type": "BlogPosting", "headline": "Kept", "datePublished": "2024-01-02",}',
        '<!-- {"@type": "NewsArticle", "headline": "Kept"} -->',
        '//<![CDATA[\n{"@type": "NewsArticle", "headline": "Kept"}\n//]]>',
        '{"@type": "WebSite", "name": "Site"}\n{"@type": "NewsArticle", "headline": "Kept"}',
        '{"@type": "NewsArticle", "headline": "Kept", "description": "two\nlines"}',
        '[{"@type": "BreadcrumbList"}, {"@type": "ReportageNewsArticle", "headline": "Kept"}]',
    ],
)
def test_malformed_json_ld_is_repaired_where_unambiguous(script: str) -> None:
    html = page(f'<script type="application/ld+json">{script}</script>')
    assert read(html).title == "Kept"


@pytest.mark.parametrize(
    "script",
    ["{", "not json at all", '{"@type": "NewsArticle", "headline": }', "", "[1, 2", "null"],
)
def test_unreadable_json_ld_is_skipped_and_the_rest_still_read(script: str) -> None:
    html = page(
        f'<script type="application/ld+json">{script}</script>'
        + ld({"@type": "NewsArticle", "headline": "From the good one"})
        + '<meta property="article:published_time" content="2024-01-02T03:04:05Z">'
    )
    meta = read(html)
    assert meta.title == "From the good one"
    assert meta.published_at == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_future_dates_within_the_skew_are_kept_and_far_ones_dropped() -> None:
    assert plausible_date(NOW + FUTURE_SKEW, NOW) == NOW + FUTURE_SKEW
    assert plausible_date(NOW + timedelta(hours=3), NOW) == NOW + timedelta(hours=3)
    assert plausible_date(NOW + FUTURE_SKEW + timedelta(seconds=1), NOW) is None
    assert plausible_date(None, NOW) is None
    ahead = '<meta property="article:published_time" content="2027-05-06T08:00:00Z">'
    fallback = "<time itemprop='datePublished' datetime='2026-11-20T07:00:00Z'>x</time>"
    assert read(page(ahead, body=fallback)).published_at == datetime(2026, 11, 20, 7, tzinfo=UTC)
    assert read(page(ahead)).published_at is None


def test_parse_date_keeps_time_and_offset() -> None:
    assert parse_date("2025-05-06T08:00:00Z") == datetime(2025, 5, 6, 8, tzinfo=UTC)
    assert parse_date("2019-11-18 10:30:00 -0500") == datetime(2019, 11, 18, 15, 30, tzinfo=UTC)
    assert parse_date("Mon, 18 Nov 2019 16:07:38 -0600") == datetime(
        2019, 11, 18, 22, 7, 38, tzinfo=UTC
    )
    assert parse_date("2025-05-06") == datetime(2025, 5, 6, tzinfo=UTC)
    assert parse_date("yesterday") is None and parse_date(42) is None


def test_extract_stores_the_declared_time_of_day() -> None:
    """Tried as a new user would: a page declaring 08:00Z was stored as midnight."""
    head = (
        '<meta property="og:title" content="Morning news">'
        '<meta property="article:published_time" content="2026-03-04T08:00:00Z">'
        '<meta name="author" content="Kim Ray">'
    )
    result = extract(page(head), "https://news.example/morning")
    assert result.published_at == datetime(2026, 3, 4, 8, 0, tzinfo=UTC)
    assert (result.title, result.author, result.extractor) == ("Morning news", "Kim Ray", "generic")
    assert result.body is not None and "wort79" in result.body


@pytest.mark.parametrize("days_ahead", [6, 40, 400])
def test_extract_never_stores_a_future_date_as_the_first_of_the_month(days_ahead: int) -> None:
    """htmldate moved a date past today to the first of its month (or year); that date
    came out of trafilatura's pass as if the page had declared it."""
    ahead = (datetime.now(UTC) + timedelta(days=days_ahead)).strftime("%Y-%m-%dT08:00:00Z")
    head = (
        f'<meta property="article:published_time" content="{ahead}">'
        '<meta name="author" content="A">'
    )
    assert extract(page(head), "https://news.example/later").published_at is None
    feed = {"published": "Tue, 06 May 2025 07:08:09 GMT"}
    result = extract(page(head), "https://news.example/later", discovery_meta=feed)
    assert result.published_at == datetime(2025, 5, 6, 7, 8, 9, tzinfo=UTC)


def test_trafilatura_metadata_runs_only_for_missing_fields(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str | None] = []
    real = trafilatura.extract_metadata

    def counting(html: str, default_url: str | None = None, **kwargs: object) -> object:
        calls.append(default_url)
        return real(html, default_url=default_url, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(trafilatura, "extract_metadata", counting)
    declared = (
        '<meta property="og:title" content="T">'
        '<meta property="article:published_time" content="2025-01-02T03:04:05Z">'
    )
    extract(page(declared + '<meta name="author" content="A">'), "https://x.example/a")
    assert calls == []
    byline = BODY.format(title="T", words=WORDS).replace(
        "<h1>T</h1>", '<h1>T</h1><p class="byline">By <span class="author">Ola Nordmann</span></p>'
    )
    result = extract(page(declared, body=byline), "https://x.example/b")
    assert calls == ["https://x.example/b"]
    assert result.author == "Ola Nordmann"


def test_a_page_missing_only_its_date_gets_htmldate_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Title and author declared, no date: only the date search runs (the URL's path
    included, as in trafilatura's pass), not the whole metadata pass."""
    passes: list[str | None] = []
    monkeypatch.setattr(
        trafilatura, "extract_metadata", lambda html, default_url=None, **_: passes.append(1)
    )
    head = '<meta property="og:title" content="T"><meta name="author" content="A">'
    dated = extract(page(head), "https://x.example/2025/07/14/harbour-plan")
    assert dated.published_at == datetime(2025, 7, 14, tzinfo=UTC)
    assert (dated.title, dated.author) == ("T", "A")
    undated = extract(page(head), "https://x.example/harbour-plan")
    assert undated.published_at is None
    # WordPress's short link names the dated permalink as its canonical
    canonical = head + '<link rel="canonical" href="https://x.example/2025/07/15/plan/">'
    short = extract(page(canonical), "https://x.example/?p=123")
    assert short.published_at == datetime(2025, 7, 15, tzinfo=UTC)
    assert passes == []  # trafilatura's whole pass never ran


def _corpus_pages() -> list[tuple[str, str]]:
    root = CORPUS / "articles"
    found = []
    truth = json.loads((root / "article-extraction-benchmark" / "ground-truth.json").read_text())
    for key, gold in truth.items():
        path = root / "article-extraction-benchmark" / "html" / f"{key}.html.gz"
        found.append((gold["url"], decode_html(gzip.decompress(path.read_bytes()), None)[0]))
    for path in sorted(Path(root / "trafilatura-eval" / "html").iterdir()):
        found.append((path.name, decode_html(path.read_bytes(), None)[0]))
    return found


def test_every_corpus_page_reads_without_error_and_news_pages_declare_their_date() -> None:
    pages = _corpus_pages()
    metas = [read(html) for _, html in pages]
    assert len(metas) == 48
    news = metas[:36]  # the article benchmark: news sites
    assert all(m.title for m in news)
    # 32 declare their date (4 say it only in the URL or the text: trafilatura's pass),
    # 30 with a time of day, which is kept (it was stored as midnight before)
    assert sum(m.published_at is not None for m in news) == 32
    assert (
        sum(bool(m.published_at and (m.published_at.hour or m.published_at.minute)) for m in news)
        == 30
    )
    assert sum(m.author is not None for m in news) >= 28


def test_declared_values_collapse_every_white_space_as_the_regex_did() -> None:
    """`_clean` splits on `str.isspace`, the characters `\\s` matches (it collapsed
    them with a regular expression before): alone or in runs, at the ends or inside."""
    spaces = [chr(code) for code in range(sys.maxunicode + 1) if chr(code).isspace()]
    assert len(spaces) > 20
    for space in spaces:
        value = f"{space}one{space}{space}two &amp;{space}"
        assert _clean(value) == re.sub(r"\s+", " ", html.unescape(value)).strip() == "one two &"
    assert _clean("".join(spaces)) is None
