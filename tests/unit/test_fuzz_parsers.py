"""Property-based fuzzing (Hypothesis) of every layer that reads bytes from the web or a
client: feeds (feedparser and the lxml fast path, in odd encodings too), sitemaps,
robots.txt, `normalize_url`, the bulk-import line reader and the sources specs (YAML with
anchors, deep nesting and huge scalars; OPML in odd encodings).

Inputs are both arbitrary bytes and near-valid documents: real corpus files mutated by
flipping, inserting and deleting bytes, truncation, an injected DOCTYPE or entity
declaration, a huge attribute value or deep nesting. The property is always the same:
nothing escapes but the layer's declared exception types, and what is returned stays
within the layer's caps.
"""

from __future__ import annotations

import gzip

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from frontier.imports import MAX_LINE_BYTES, ImportFormat, Line, UnusableInput, read_lines
from frontier.robots import ROBOTS_MAX_BYTES, RobotsRules, decode_robots, interpret, parse
from frontier.states import RobotsStatus
from frontier.urls import MAX_URL_LENGTH, InvalidURL, normalize_url
from poller.errors import DocumentRefused, SitemapRefused
from poller.feed_fastpath import parse_fast
from poller.feed_parse import parse_feed
from poller.sitemap_parse import MAX_URLS, parse_sitemap, sitemaps_in_robots
from tests.corpus_path import CORPUS

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
QUICK = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

FEED_URL = "http://feeds.example.com/feed.xml"
BASES = ("http://example.com/a/b/c", "https://xn--bcher-kva.example/dir/", "http://[::1]:8080/")


def _corpus(folder: str, suffixes: tuple[str, ...], limit: int = 200_000) -> list[bytes]:
    files = sorted(p for p in (CORPUS / folder).rglob("*") if p.suffix in suffixes)
    return [p.read_bytes() for p in files if p.stat().st_size <= limit]


FEEDS = _corpus("feeds", (".xml", ".rss", ".atom", ".rdf", ".json"))
SITEMAPS = _corpus("sitemaps", (".xml", ".txt", ".gz"))
ROBOTS = _corpus("robots", (".txt",))

INJECTIONS = (
    b'<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>',
    b'<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>',
    b'<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" '
    b'"http://my.netscape.com/publish/formats/rss-0.91.dtd">',
    b"<!doctype html>",
    b"&lol2;&xxe;",
    b'<a href="' + b"x" * 200_000 + b'">',
    b"<div>" * 3_000 + b"</div>" * 3_000,
    b"<![CDATA[" + b"]" * 100,
    b"<?xml version='1.0' encoding='utf-16'?>",
    b"<?xml version='1.0' encoding='bogus-charset'?>",
    b"\x00\xff\xfe\x80\x9f",
    b"\xef\xbb\xbf",
)


@st.composite
def mutated(draw: st.DrawFn, documents: list[bytes]) -> bytes:
    """A corpus document with a few byte-level and structural mutations applied."""
    data = bytearray(draw(st.sampled_from(documents)))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(("flip", "insert", "delete", "truncate", "inject")))
        at = draw(st.integers(0, len(data)))
        if kind == "flip" and data:
            at = min(at, len(data) - 1)
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "delete":
            del data[at : at + draw(st.integers(1, 64))]
        elif kind == "truncate":
            del data[at:]
        else:
            data[at:at] = draw(st.sampled_from(INJECTIONS))
    return bytes(data)


def near_valid(documents: list[bytes]) -> st.SearchStrategy[bytes]:
    return st.one_of(st.binary(max_size=2_000), mutated(documents))


# -- feeds ---------------------------------------------------------------------------

CONTENT_TYPES = st.sampled_from(
    (
        "",
        "application/rss+xml",
        "text/xml; charset=iso-8859-1",
        "application/json",
        "application/feed+json",
        "text/html; charset=utf-16",
        "application/xml; charset=bogus",
    )
)


@FAST
@given(body=near_valid(FEEDS), content_type=CONTENT_TYPES)
@example(body=b"<rss>" + b"<item>" * 10_000, content_type="")
@example(body=b'{"items": [1, "x", null, {"url": 5}]}', content_type="")
@example(body=b'{"items": [{"url": "http://a.example/x"}], "feed_url": 7}', content_type="")
# feedparser's own decoding raises on these (found by Hypothesis)
@example(body=b'<?xml version="1.0" encoding="\x80"?><rss/>', content_type="")
@example(body=b'<?xml version="1.0" encoding="u\x00"?><rss/>', content_type="")
def test_feed_parse_raises_only_feed_refused(body: bytes, content_type: str) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    try:
        parsed = parse_feed(body, headers, FEED_URL)
    except DocumentRefused:
        return
    assert len(parsed.entries) + len(parsed.skipped) <= max(parsed.items_seen, 0)
    assert len({e.url for e in parsed.entries}) == len(parsed.entries)


@FAST
@given(body=near_valid(FEEDS))
def test_feed_fast_path_never_raises(body: bytes) -> None:
    fast = parse_fast(body, {"content-type": "application/rss+xml"}, FEED_URL)
    assert fast is None or fast.items_seen == len(fast.raw)


@QUICK
@given(declaration=st.sampled_from(INJECTIONS[:2]), prefix=st.sampled_from((b"", b"\xef\xbb\xbf")))
def test_feeds_declaring_entities_are_refused(declaration: bytes, prefix: bytes) -> None:
    body = prefix + b'<?xml version="1.0"?>' + declaration + b"<rss><channel/></rss>"
    for encoded in (body, body.decode("utf-8-sig").encode("utf-16")):
        try:
            parse_feed(encoded, {}, FEED_URL)
        except DocumentRefused as exc:
            assert "entit" in str(exc)
        else:
            raise AssertionError("a feed declaring entities was parsed")


# -- sitemaps ------------------------------------------------------------------------


def _gzipped(documents: list[bytes]) -> st.SearchStrategy[bytes]:
    return mutated(documents).map(gzip.compress)


@FAST
@given(body=st.one_of(near_valid(SITEMAPS), _gzipped(SITEMAPS)))
@example(body=b"<urlset>" + b"<url><loc>http://a.example/</loc></url>" * (MAX_URLS + 5))
@example(body=b"http://a.example/\n" * (MAX_URLS + 5))
@example(body=gzip.compress(b"<urlset>" + b" " * 3_000_000 + b"</urlset>")[:-8])
@example(body=b"<urlset><url><loc>http://a.example/</loc></url>" + b"<url>" * 5_000)
def test_sitemap_parse_raises_only_sitemap_refused(body: bytes) -> None:
    try:
        sitemap = parse_sitemap(body)
    except SitemapRefused:
        return
    assert sitemap.kind in ("urlset", "index", "text")
    assert len(sitemap.urls) <= MAX_URLS
    if len(sitemap.urls) == MAX_URLS:
        assert sitemap.truncated
    assert all(isinstance(u.loc, str) for u in sitemap.urls)


# -- robots.txt ----------------------------------------------------------------------

ROBOT_URLS = st.one_of(
    st.sampled_from(("http://example.com/", "http://example.com/a?b=%zz", "http://example.com/%")),
    st.text(max_size=60).map(lambda s: "http://example.com/" + s),
)


@FAST
@given(
    body=near_valid(ROBOTS),
    status=st.sampled_from((200, 204, 301, 404, 500, 503, None)),
    url=ROBOT_URLS,
)
@example(
    body=b"User-agent: *\nDisallow: /\n" + b"#" * (ROBOTS_MAX_BYTES * 2),
    status=200,
    url="http://example.com/",
)
@example(body=b"<html><body><h1>Oops</h1></body></html>", status=200, url="http://example.com/")
@example(body=b"User-agent: *\x00\nDisallow: /x\x00\n", status=200, url="http://example.com/x")
def test_robots_interpret_and_match_never_raise(body: bytes, status: int | None, url: str) -> None:
    record = interpret(
        "example.com",
        token="frontier-crawler",
        http_status=status,
        body=body,
        error=None if status else "timeout",
        max_crawl_delay_ms=60_000,
    )
    assert record.robots_txt is None or len(record.robots_txt) <= ROBOTS_MAX_BYTES
    # Stored as PostgreSQL text, which cannot hold NUL (a binary robots.txt crashed the fetcher).
    assert "\x00" not in (record.robots_txt or "")
    assert record.crawl_delay_ms is None or 0 <= record.crawl_delay_ms <= 60_000
    rules = RobotsRules.of(record.status, record.robots_txt, "frontier-crawler")
    allowed = rules.allows(url, "frontier-crawler")
    assert isinstance(allowed, bool)
    if record.status is RobotsStatus.DISALLOW_ALL:
        assert allowed is False
    assert isinstance(sitemaps_in_robots(decode_robots(body)), list)


@QUICK
@given(text=st.text(max_size=500))
def test_robots_parse_of_any_text_never_raises(text: str) -> None:
    parsed = parse(text)
    assert parsed is None or parsed.can_fetch("http://example.com/x", "frontier-crawler") in (
        True,
        False,
    )


# -- URLs ----------------------------------------------------------------------------

URL_PIECES = st.sampled_from(
    (
        "http:",
        "https:",
        "//",
        "/",
        "\\",
        "..",
        ".",
        "%2e",
        "%",
        "%zz",
        "?",
        "#",
        "&",
        "=",
        "@",
        ":",
        "[",
        "]",
        "::1",
        "xn--",
        "ß",
        "\uff41",
        "\u200d",
        "\x00",
        "\t",
        " ",
        "utm_source",
        "example.com",
        "127.0.0.1",
        "0x7f.1",
        "65536",
        "\ud800",
        "javascript:",
        "file:",
    )
)
URLS = st.one_of(
    st.text(max_size=80),
    st.lists(st.one_of(URL_PIECES, st.text(max_size=4)), max_size=12).map("".join),
    st.builds(lambda n: "http://example.com/" + "a" * n, st.integers(4000, 5000)),
)


@QUICK
@given(url=URLS, base=st.one_of(st.none(), st.sampled_from(BASES), URLS))
@example(url="http://example.com/%2e%2E/a/", base=None)
@example(url="?a=1", base="not a base")
def test_normalize_url_raises_only_invalid_url_and_is_idempotent(
    url: str, base: str | None
) -> None:
    try:
        normalized = normalize_url(url, base)
    except InvalidURL:
        return
    assert normalized.isascii()
    assert normalized.startswith(("http://", "https://"))
    assert len(normalized) <= MAX_URL_LENGTH
    assert normalize_url(normalized) == normalized


# -- bulk import lines ---------------------------------------------------------------

ODD_LINES = (b"x" * (MAX_LINE_BYTES + 1), b'{"url": ', b"\xef\xbb\xbfurl,a\n", b"a\rb\n")
LINES = st.lists(
    st.one_of(
        st.binary(max_size=60),
        st.text(max_size=60).map(lambda s: s.encode() + b"\n"),
        st.sampled_from(ODD_LINES),
    ),
    max_size=20,
)


@QUICK
@given(lines=LINES, fmt=st.sampled_from(list(ImportFormat)))
@example(lines=[b"url\n", b"http://a.example/\rb\n"], fmt=ImportFormat.CSV)  # was csv.Error
@example(lines=[b"a\rb"], fmt=ImportFormat.CSV)
def test_read_lines_yields_a_verdict_per_line(lines: list[bytes], fmt: ImportFormat) -> None:
    try:
        result = list(read_lines(lines, fmt))
    except UnusableInput:
        assert fmt is ImportFormat.CSV
        return
    numbers = [line.number for line in result]
    assert numbers == sorted(set(numbers))
    assert all(1 <= n <= len(lines) for n in numbers)
    for line in result:
        assert (line.url is None) != (line.error is None)
    if fmt is ImportFormat.CSV and lines[:2] == [b"url\n", b"http://a.example/\rb\n"]:
        assert result == [Line(2, None, result[0].error)] and "CSV" in (result[0].error or "")


def test_corpus_is_present() -> None:
    assert len(FEEDS) > 50 and len(SITEMAPS) > 10 and len(ROBOTS) > 20


# -- feeds in odd encodings (issue 19, item 11) --------------------------------------

ODD_ENCODINGS = (
    "utf-7",
    "cp037",
    "cp500",
    "cp1140",
    "cp875",
    "utf-16-le",
    "utf-16-be",
    "utf-32",
    "utf-32-le",
    "utf-8",
    "iso-8859-1",
)


def _encoded(text: str, encoding: str) -> bytes:
    if encoding != "utf-7":
        return text.encode(encoding)
    # Python writes `<` directly in UTF-7; a hostile feed spells it `+ADw-` (all but the
    # XML declaration's, which must stay readable for a parser to pick UTF-7).
    declaration, sep, rest = text.partition("?>") if text.startswith("<?xml") else ("", "", text)
    return (declaration + sep).encode() + rest.encode("utf-7").replace(b"<", b"+ADw-")


@QUICK
@given(
    encoding=st.sampled_from(ODD_ENCODINGS),
    declaration=st.sampled_from(INJECTIONS[:2]),
    where=st.sampled_from(("xml", "http", "both")),
)
def test_feeds_declaring_entities_in_any_encoding_are_refused(
    encoding: str, declaration: bytes, where: str
) -> None:
    xml = f'<?xml version="1.0" encoding="{encoding}"?>' if where != "http" else ""
    text = (
        xml + declaration.decode() + '<rss version="2.0"><channel><title>t</title></channel></rss>'
    )
    headers = {"Content-Type": f"application/rss+xml; charset={encoding}"} if where != "xml" else {}
    try:
        parse_feed(_encoded(text, encoding), headers, FEED_URL)
    except DocumentRefused as exc:
        assert "entit" in str(exc) or "cannot be checked" in str(exc)
    else:
        raise AssertionError(f"a {encoding} feed declaring entities was parsed")


@FAST
@given(body=near_valid(FEEDS), encoding=st.sampled_from(ODD_ENCODINGS))
def test_feeds_in_odd_encodings_raise_only_feed_refused(body: bytes, encoding: str) -> None:
    text = body.decode("utf-8", "replace")
    try:
        recoded = _encoded(text, encoding)
    except UnicodeEncodeError:
        recoded = body
    for headers in ({}, {"Content-Type": f"application/rss+xml; charset={encoding}"}):
        try:
            parsed = parse_feed(recoded, headers, FEED_URL)
        except DocumentRefused:
            continue
        assert len(parsed.entries) + len(parsed.skipped) <= max(parsed.items_seen, 0)
        assert parsed.title is None or len(parsed.title) <= len(recoded) * 4


# -- sources specs: YAML and OPML (issue 19, items 6 and 11) ---------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=40),
    st.sampled_from(["https://a.example/feed", "ftp://x", "x" * 200_000]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=40,
)
SPEC_KEYS = st.sampled_from(
    [
        "name",
        "feed_url",
        "base_url",
        "priority",
        "url_filters",
        "selectors",
        "spider_listing_urls",
        "other",
    ]
)
YAML_INJECTIONS = (
    b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n",
    b"sources: *b\n",
    b"<<: *a\n",
    b"[" * 5_000,
    b"- " * 2_000 + b"x\n",
    b"{a: " * 3_000,
    b"!!python/object/apply:os.system ['true']\n",
    b"x: " + b"y" * 300_000 + b"\n",
    b"\t\x00\xff\xfe",
)


@st.composite
def yaml_specs(draw: st.DrawFn) -> bytes:
    import yaml

    entries = draw(st.lists(st.dictionaries(SPEC_KEYS, VALUES, max_size=6), max_size=6))
    data = bytearray(yaml.safe_dump({"sources": entries}).encode())
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(("inject", "insert", "truncate")))
        if kind == "inject":
            data[at:at] = draw(st.sampled_from(YAML_INJECTIONS))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            del data[at:]
    return bytes(data)


@FAST
@given(data=st.one_of(yaml_specs(), st.binary(max_size=2_000)))
@example(data=b"sources:\n" + b"  " * 0 + b"- [" * 5_000)
@example(data=b"a: &a [x]\nsources: [*a]\n")
def test_yaml_specs_parse_or_are_refused_clearly(data: bytes) -> None:
    from frontier.source_specs import UnusableSpec, parse_specs

    try:
        parsed = parse_specs(data, "feeds.yaml")
    except UnusableSpec as exc:
        assert str(exc) and len(str(exc)) < 2_000
        return
    assert len(parsed.specs) + len(parsed.errors) <= data.count(b"\n") + 1


OPML_TEMPLATE = (
    b'<?xml version="1.0"?><opml version="2.0"><body><outline text="News">'
    b'<outline text="One" xmlUrl="https://one.example/rss" htmlUrl="https://one.example/"/>'
    b'<outline title="Two" xmlUrl="https://two.example/atom.xml"/></outline></body></opml>'
)


@FAST
@given(data=near_valid([OPML_TEMPLATE]), encoding=st.sampled_from(ODD_ENCODINGS))
def test_opml_specs_parse_or_are_refused_clearly(data: bytes, encoding: str) -> None:
    from frontier.source_specs import UnusableSpec, parse_specs

    text = data.decode("utf-8", "replace").replace('"1.0"?>', f'"1.0" encoding="{encoding}"?>', 1)
    try:
        recoded = _encoded(text, encoding)
    except UnicodeEncodeError:
        recoded = data
    for document in (data, recoded):
        try:
            parsed = parse_specs(document, "subs.opml")
        except UnusableSpec as exc:
            assert str(exc)
            continue
        assert all(len(spec.name) <= len(document) for _, spec in parsed.specs)
