"""The proof that htmldate finds no date (`fetcher.date_bound`) holds: whenever it says
a page is dateless, `find_date` with `date_from_markup`'s settings returns None, on the
page's text and on its lxml tree, on every corpus page, on bench.fetch's pages and on
generated markup full of dates and near-dates (years in and out of range, 2-digit years,
d/m/y, ISO, compact dates, month names, `datetime` attributes, JSON-LD, dates in URLs and
images, digits split by markup, references and control characters, numbers like
"12-345"). And it covers bench.fetch's standard pages, for which it was made."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from datetime import UTC, datetime
from html.entities import html5 as html_references

from htmldate import find_date
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bench.extract_identity import pages
from bench.fetch import PAGE_SETS
from fetcher.date_bound import CHUNK, dateless
from fetcher.encoding import decode_html
from fetcher.extract import _date_config, date_from_markup, lxml_page
from tests.corpus_path import CORPUS

NOW = datetime.now(UTC)


def _found(html: str, url: str | None) -> set[str | None]:
    """What htmldate finds in the page's text and in its lxml tree, as date_from_markup
    asks (an error counts as nothing found, as there)."""
    found = set()
    for markup in (html, lxml_page(html)):
        if markup is None:
            continue
        try:
            found.add(find_date(markup, url=url, **_date_config(NOW)))
        except Exception:  # date_from_markup finds nothing then too
            found.add(None)
    return found


def _holds(html: str, url: str | None, name: str = "") -> bool:
    """The proof's verdict, asserted against htmldate's when it says dateless."""
    proven = dateless(html, url)
    if proven:
        assert _found(html, url) <= {None}, (name, html[:300], url)
    return proven


def _corpus_pages() -> Iterator[tuple[str, str, str | None]]:
    """bench.extract_identity's pages, and every HTML page of the shared corpus."""
    for name, body, url in pages():
        yield name, decode_html(body, None)[0], url or "https://example.com/article"
    for path in sorted(CORPUS.rglob("*")):
        if path.name.endswith((".html", ".htm", ".html.gz")):
            body = path.read_bytes()
            body = gzip.decompress(body) if path.name.endswith(".gz") else body
            yield str(path), decode_html(body, None)[0], None


def test_the_proof_holds_on_every_corpus_and_bench_page() -> None:
    count = 0
    for name, html, url in _corpus_pages():
        _holds(html, url, name)
        count += 1
    assert count > 100


def test_the_standard_pages_are_proven_dateless_and_are() -> None:
    """Every shape of bench.fetch's standard page ("Story 199-99, part 7", "Desk 199"),
    under its URLs (port 18080 or another), is proven dateless, and htmldate agrees;
    the small and large pages carry dates and are left to it."""
    build = PAGE_SETS["standard"][1]
    for host in (0, 7, 12, 99, 150, 199):
        for page in (0, 5, 57, 99):
            html = build(host, page)
            for port in (18080, 18971, 19999, 12025):
                url = f"http://127.0.{10 + host // 250}.{10 + host % 250}:{port}/a/{page}"
                assert _holds(html, url), (host, page, port)
    for page_set in ("small", "large"):
        html = PAGE_SETS[page_set][1](3, 7)
        assert not dateless(html, "http://127.0.0.13:18080/s/7")
        assert date_from_markup(html, "http://127.0.0.13:18080/s/7", NOW).published_at


def test_a_dateless_page_gives_what_the_search_gave() -> None:
    html = PAGE_SETS["standard"][1](4, 2)
    found = date_from_markup(html, "http://127.0.0.14:18080/a/2", NOW, lxml_page(html))
    assert found == date_from_markup(html, None, NOW)
    assert found.published_at is None


# Dates and near-dates, as text, attributes and whole elements
_NEAR = (
    "Story 12-345, part 3:",
    "Desk 12",
    "part 7",
    "No. 123",
    "1.2.3",
    "v1.22.3",
    "12:30",
    "12:30:45",
    "Jan 5",
    "March 12th",
    "5 mai",
    "the 90s",
    "20 25",
    "2O25",
    "12/05",
    "05.2",
    "12-34",
    "123-456-78",
    "1 2 3 4",
    "3.14",
    "Mon 12 Aug",
    "Juli 9",
    "9 de julio",
    "15 octobre",
    "&amp;",
    "&nbsp;12&nbsp;",
    "a &lt; 12 &gt; b",
    "100%",
    "$12",
    "caf\u00e9",
    "\u00a012\u00a0",
)
_DATES = (
    "2025-07-14",
    "2025-07-14T08:30:00+02:00",
    "14.07.25",
    "14.07.2025",
    "7/14/25",
    "14/7/2025",
    "20250714",
    "202507141230",
    "July 14, 2025",
    "14 juillet 2025",
    "14. Juli 2025",
    "14 de julio de 2025",
    "Jul 2025",
    "07/2025",
    "2025/07",
    "1230 pm 5",
    "1999",
    "2025",
    "1890-01-01",
    "2999-12-31",
    "12.05.99",
    "01.01.00",
    "posted on 14.07.25",
    "Datum: 14.07.2025",
    "updated 2025/07/14",
    "\u00a9 2024",
    "\uff12\uff10\uff12\uff15-07-14",  # full-width digits
    "\u0662\u0660\u0662\u0665-07-14",  # Arabic-Indic digits
    "\u00b2\u00b3-07-14",
    "&#50;&#48;&#50;&#53;-07-14",
    "&#x32;025-07-14",
    "2025&period;07&period;14",
    "14&sol;07&sol;25",
    "&sup2;025-07-14",
    "20<b>25</b>-07-14",
    "20<!-- x -->25-07-14T10:00:00",
    "12.<i>05</i>.24",
    "2<span></span>0<span></span>2<span></span>5-01-02",
    "14.07.<svg><text>x</text></svg>25",
    "20 <b></b> 25-07-14",
    "2025<pre>\n-07-14</pre>",
    "20\x0025-07-14",
    "20\x0b25-07-14",
    "20\ufffe25-07-14",
)
_FILLERS = ("word", " ", "\n", ", ", ".", "-", ": ", "<br>")


def _texts(dates: bool) -> st.SearchStrategy[str]:
    """Text of near-dates, and of dates when `dates` (half the pages: the other half
    are mostly proven dateless, where the proof is put to the test)."""
    pieces = st.sampled_from(_NEAR + _DATES if dates else _NEAR)
    return st.lists(pieces | st.sampled_from(_FILLERS), max_size=4).map("".join)


_TAGS = ("div", "p", "span", "li", "h1", "h2", "footer", "small", "time", "abbr", "b", "td")
_CLASSES = ("", "date", "byline", "meta", "published", "post-info", "time", "footer")
_ATTRIBUTES = ("title", "datetime", "content", "data-utime", "src", "href", "class")


@st.composite
def _element(draw: st.DrawFn, dates: bool, depth: int = 0) -> str:
    text = _texts(dates)
    kind = draw(st.integers(0, 9))
    if kind < 3 or depth >= 3:
        return draw(text)
    if kind == 3:
        name = draw(
            st.sampled_from(("date", "og:url", "pubdate", "description", "article:published_time"))
        )
        attribute = draw(st.sampled_from(("name", "property", "itemprop", "http-equiv")))
        return f'<meta {attribute}="{name}" content="{draw(text)}">'
    if kind == 4:
        return (
            '<script type="application/ld+json">{"@type": "NewsArticle", '
            f'"datePublished": "{draw(text)}", "id": {draw(st.integers(0, 10**12))}}}</script>'
        )
    if kind == 5:
        src = draw(st.sampled_from(("/img/", "/2025/07/14/", "/uploads/2025/07/", "/a/12-34/")))
        return f'<img src="{src}x.jpg"><meta property="og:image" content="{src}y.jpg">'
    tag = draw(st.sampled_from(_TAGS))
    attributes = "".join(
        f' {name}="{draw(text) if name != "class" else draw(st.sampled_from(_CLASSES))}"'
        for name in draw(st.lists(st.sampled_from(_ATTRIBUTES), max_size=2, unique=True))
    )
    inner = "".join(draw(st.lists(_element(dates, depth + 1), max_size=3)))
    return f"<{tag}{attributes}>{inner}</{tag}>"


_URLS = st.sampled_from(
    (
        None,
        "http://127.0.0.10:18971/a/57",
        "https://example.com/news/12-345",
        "https://example.com/2025/07/14/story",
        "https://example.com/story-2025-07-14",
        "https://example.com/20250714/story",
        "https://example.com/1994/01/01/old",
        "https://example.com:12025/a/1",
    )
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.booleans().flatmap(lambda dates: st.lists(_element(dates), min_size=1, max_size=6)),
    _URLS,
    st.sampled_from(("", "Desk 12")),
)
@example(["<p>Story 12-345, part 3: words</p>"], "http://127.0.0.10:18080/a/3", "Desk 12")
@example(["<p>20</p><p>25-07-14</p>"], None, "")
@example(["<div class='date'>1<b>4.0</b>7.25</div>"], None, "")
@example(["<abbr data-utime='1500000000'>x</abbr>"], None, "")
@example(["<time>12<!-- -->.05.24 x</time>"], None, "")
@example(["<p>x</p>"], None, "&#50;&#48;25-07-14")
def test_the_proof_holds_on_generated_markup(body: list[str], url: str | None, author: str) -> None:
    content = f"<meta name='author' content='{author}'>" if author else ""
    page = (
        f"<!doctype html><html lang='en'><head><title>Story</title>{content}</head>"
        f"<body><article>{''.join(body)}</article></body></html>"
    )
    _holds(page, url)
    _holds("".join(body), url)


def test_every_reference_to_a_digit_or_separator_is_refused() -> None:
    """The named references the proof refuses are all of HTML's that decode to a digit
    (`str.isdigit`) or a separator (step 3 (a))."""
    for name, text in html_references.items():
        if any(char.isdigit() or char in "./-" for char in text):
            assert not dateless(f"<p>x &{name} y</p>", None), name
    assert dateless("<p>x &amp; &nbsp; &hellip; &mdash; &lt;b&gt; y</p>", None)


def test_the_proof_reads_every_chunk() -> None:
    """A date past the first chunk, or across two, is seen."""
    filler = "<p>" + "word " * (CHUNK // 5) + "</p>"
    html = f"<html><body>{filler}<p>x</p></body></html>"
    assert dateless(html, None)
    for at in range(CHUNK - 12, CHUNK + 4):
        dated = html[:at] + " 2025-07-14 " + html[at:]
        assert not dateless(dated, None), at


def test_hostile_pages_are_read_through() -> None:
    """Long runs of what the check looks for (no timing asserted: its work is a few
    passes over the bytes and searches for fixed strings)."""
    for hostile in ("1<" * 100_000, ">1" * 100_000, " " * 500_000, "1.2." * 50_000, "&" * 10**5):
        _holds(f"<html><body><p>{hostile}</p></body></html>", None)
    assert _holds("<html><body><p>" + "a" * 1_000_000 + "</p></body></html>", None)


def test_the_proof_reads_shapes_of_wide_characters_across_chunks() -> None:
    """The chunks are of the page's bytes: a shape of characters of several bytes each
    (mathematical digits, counted as digits) across a chunk's end is seen."""
    filler = "<p>" + "word " * (CHUNK // 5) + "</p>"
    html = f"<html><body>{filler}<p>x</p></body></html>"
    wide = "\U0001d7d0\U0001d7ce\U0001d7d0\U0001d7d3"  # a year in 4 digits of 4 bytes each
    for at in range(CHUNK - 20, CHUNK + 4):
        assert not dateless(html[:at] + f" {wide} " + html[at:], None), at
