"""URL normalisation (`frontier.urls`): golden cases per rule, the shared URL corpus, and
properties (idempotence; nothing but `InvalidURL` is ever raised).

Corpus vectors come from ``tests/corpus/urls/`` (see its README and MANIFEST.tsv); each
test id carries its vector's number and the file's vector count, e.g. ``wpt-fail-007of161``.
"""

import csv
import hashlib
import json
import re
import string
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frontier.errors import FrontierError
from frontier.url_query import TRACKING_PARAMS, is_tracking_param
from frontier.urls import (
    MAX_URL_LENGTH,
    InvalidURL,
    identity_and_spelling,
    normalize_url,
    request_spelling,
    url_hash,
    url_host,
)
from tests.corpus_path import CORPUS

URLS = CORPUS / "urls"


# --- golden cases, one group per rule --------------------------------------------------

GOLDEN = [
    # leading/trailing C0 controls and spaces are stripped, as browsers do
    ("  http://example.com/a  ", "http://example.com/a"),
    ("\n\t http://example.com/a\r\n", "http://example.com/a"),
    # backslashes before the query are slashes; in the query they are data
    ("http:\\\\example.com\\a\\b?x=\\", "http://example.com/a/b?x=%5C"),
    # scheme: lowercased
    ("HTTP://example.com/", "http://example.com/"),
    ("HtTpS://example.com/", "https://example.com/"),
    # any number of slashes between "http:" and the host, as browsers read it
    ("http:/example.com/a", "http://example.com/a"),
    ("http:example.com/a", "http://example.com/a"),
    ("https:///example.com/a", "https://example.com/a"),
    # userinfo: dropped (never store credentials)
    ("http://user:secret@example.com/", "http://example.com/"),
    ("http://user@example.com/", "http://example.com/"),
    ("http://@example.com/", "http://example.com/"),
    ("http://a@b@example.com/", "http://example.com/"),
    # host: lowercased, path case kept
    ("http://WWW.Example.COM/Path/File.HTML", "http://www.example.com/Path/File.HTML"),
    # host: trailing dot dropped
    ("https://www.example.org./", "https://www.example.org/"),
    # host: percent-decoded
    ("https://example%2Ecom/", "https://example.com/"),
    ("http://b%C3%BCcher.de/", "http://xn--bcher-kva.de/"),
    # host: UTS #46 mapping then IDNA 2008 (non-transitional: ß stays ß)
    ("http://bücher.de/", "http://xn--bcher-kva.de/"),
    ("http://BÜCHER.DE/", "http://xn--bcher-kva.de/"),
    ("http://xn--bcher-kva.de/", "http://xn--bcher-kva.de/"),
    ("http://faß.de/", "http://xn--fa-hia.de/"),
    ("http://例え.テスト/", "http://xn--r8jz45g.xn--zckzah/"),
    ("https://нэб.рф/", "https://xn--90ax2c.xn--p1ai/"),
    ("http://\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com/", "http://example.com/"),
    ("http://a\u3002b.com/", "http://a.b.com/"),
    ("http://a\u00adb.com/", "http://ab.com/"),
    # host: ASCII names that resolve in practice but IDNA 2008 would refuse are kept
    ("http://r3---sn-ab5l6n7s.googlevideo.com/", "http://r3---sn-ab5l6n7s.googlevideo.com/"),
    ("http://my_host.example.com/", "http://my_host.example.com/"),
    # host: IPv4 in browser notations, canonical dotted decimal
    ("http://127.0.0.1/", "http://127.0.0.1/"),
    ("http://0x7f.0.0.1/", "http://127.0.0.1/"),
    ("http://0177.0.0.1/", "http://127.0.0.1/"),
    ("http://127.1/", "http://127.0.0.1/"),
    ("http://2130706433/", "http://127.0.0.1/"),
    ("http://1.2.3.4./", "http://1.2.3.4/"),
    # host: IPv6 compressed and lowercased
    ("http://[::1]/", "http://[::1]/"),
    ("http://[0:0:0:0:0:0:0:1]:8080/", "http://[::1]:8080/"),
    ("http://[2001:DB8:0:0:1:0:0:1]/", "http://[2001:db8::1:0:0:1]/"),
    ("http://[::ffff:192.0.2.1]/", "http://[::ffff:c000:201]/"),
    # port: default dropped, empty dropped, leading zeros dropped, others kept
    ("http://example.com:80/", "http://example.com/"),
    ("https://example.com:443/", "https://example.com/"),
    ("http://example.com:443/", "http://example.com:443/"),
    ("https://example.com:80/", "https://example.com:80/"),
    ("http://example.com:/", "http://example.com/"),
    ("http://example.com:0080/", "http://example.com/"),
    ("http://example.com:08080/a", "http://example.com:8080/a"),
    ("http://[::1]:80/", "http://[::1]/"),
    # dot segments
    ("http://example.com/a/b/../c", "http://example.com/a/c"),
    ("http://example.com/a/./b", "http://example.com/a/b"),
    ("http://example.com/../../a", "http://example.com/a"),
    ("http://example.com/a/b/..", "http://example.com/a"),
    ("http://example.com/a/%2e%2E/b", "http://example.com/b"),
    ("http://example.com/a..b/.c/..d", "http://example.com/a..b/.c/..d"),
    ("http://example.com/.htaccess", "http://example.com/.htaccess"),
    ("http://example.com/a//b/../c", "http://example.com/a//c"),
    # empty path becomes "/"; repeated slashes are kept
    ("http://example.com", "http://example.com/"),
    ("http://example.com?a=1", "http://example.com/?a=1"),
    ("http://example.com/a//b", "http://example.com/a//b"),
    # percent-escapes: unreserved decoded, the rest uppercased and kept
    ("http://example.com/%7euser/%41%62%2d%2E%5f", "http://example.com/~user/Ab-._"),
    ("http://example.com/a%2fb%3bc%23d%25e", "http://example.com/a%2Fb%3Bc%23d%25e"),
    ("http://example.com/caf%c3%a9?q=caf%c3%a9", "http://example.com/caf%C3%A9?q=caf%C3%A9"),
    ("http://example.com/?q=%26%3d%2b", "http://example.com/?q=%26%3D%2B"),
    ("http://example.com/%20%2520", "http://example.com/%20%2520"),
    # a "%" that starts no escape is escaped itself
    ("http://example.com/100%", "http://example.com/100%25"),
    ("http://example.com/p%zz%77%v", "http://example.com/p%25zzw%25v"),
    ("http://example.com/?q=foobar%2", "http://example.com/?q=foobar%252"),
    # characters not allowed raw are encoded, non-ASCII as UTF-8
    ("http://example.com/a b", "http://example.com/a%20b"),
    ("http://example.com/en Español", "http://example.com/en%20Espa%C3%B1ol"),
    (
        "http://example.com/日本?q=日本",
        "http://example.com/%E6%97%A5%E6%9C%AC?q=%E6%97%A5%E6%9C%AC",
    ),
    ('http://example.com/"<>^`{|}', "http://example.com/%22%3C%3E%5E%60%7B%7C%7D"),
    ("http://example.com/?x[y]=1", "http://example.com/?x%5By%5D=1"),
    ("http://example.com/\U0001f600", "http://example.com/%F0%9F%98%80"),
    # sub-delims and ":@/?" stay raw
    ("http://example.com/a:b@c!$'()*+,;=?q=/?:@", "http://example.com/a:b@c!$'()*+,;=?q=/?:@"),
    ("http://example.com/path/file-with-a-*.html", "http://example.com/path/file-with-a-*.html"),
    # trailing slash of a non-root path removed (all of them); root kept
    ("http://example.com/a/", "http://example.com/a"),
    ("http://example.com/a//", "http://example.com/a"),
    ("http://example.com/", "http://example.com/"),
    ("http://example.com//", "http://example.com/"),
    ("http://example.com/a/?b=1", "http://example.com/a?b=1"),
    # tracking parameters dropped, meaningful look-alikes kept
    ("http://example.com/a?utm_source=x&utm_medium=y&utm_campaign=z", "http://example.com/a"),
    ("http://example.com/a?UTM_Source=x&id=7", "http://example.com/a?id=7"),
    ("http://example.com/a?fbclid=1&gclid=2&dclid=3&msclkid=4&yclid=5", "http://example.com/a"),
    ("http://example.com/a?mc_cid=1&mc_eid=2&_ga=3&_gl=4&igshid=5", "http://example.com/a"),
    ("http://example.com/a?_hsenc=1&_hsmi=2&mkt_tok=3&__s=4&vero_id=5", "http://example.com/a"),
    ("http://example.com/a?gbraid=1&wbraid=2&twclid=3&ttclid=4", "http://example.com/a"),
    ("http://example.com/a?oly_anon_id=1&oly_enc_id=2", "http://example.com/a"),
    ("http://example.com/a?utm%5Fsource=x&b=1", "http://example.com/a?b=1"),
    ("http://example.com/a?utm_source", "http://example.com/a"),
    (
        "http://example.com/a?ref=home&source=rss&id=1",
        "http://example.com/a?id=1&ref=home&source=rss",
    ),
    ("http://example.com/a?utm=1&xutm_source=2", "http://example.com/a?utm=1&xutm_source=2"),
    # blank values kept as written: "a=" and "a" are different parameters
    ("http://example.com/?a=&b", "http://example.com/?a=&b"),
    ("http://example.com/?b&a=", "http://example.com/?a=&b"),
    ("http://example.com/?a&a=", "http://example.com/?a&a="),
    # query sorted stably by name: equal names keep their order
    ("http://example.com/?b=1&a=1", "http://example.com/?a=1&b=1"),
    ("http://example.com/?b=2&a=1&b=1&a=0", "http://example.com/?a=1&a=0&b=2&b=1"),
    ("http://example.com/?tag=z&tag=a", "http://example.com/?tag=z&tag=a"),
    ("http://example.com/?a=2&a=1", "http://example.com/?a=2&a=1"),
    # empty parameters and an empty query are dropped; ";" and "+" are data
    ("http://example.com/?a=1&&b=2&", "http://example.com/?a=1&b=2"),
    ("http://example.com/?", "http://example.com/"),
    ("http://example.com/a?&", "http://example.com/a"),
    ("https://foo.com/search?q=tl;dr", "https://foo.com/search?q=tl;dr"),
    ("http://x.com/s?q=a+b", "http://x.com/s?q=a+b"),
    ("http://x.com/?=1&a=1", "http://x.com/?=1&a=1"),
    # session identifiers dropped (frontier.session_ids): Nutch's default rule's names,
    # whatever the value, in the path or the query (its own test vectors, then ours)
    (
        "http://www.foo.com/foo.html;jsessionid=1E6FEC0D14D044541DD84D2D013D29ED?param=1&another=2",
        "http://www.foo.com/foo.html?another=2&param=1",
    ),
    (
        "http://www.foo.com/foo.html?param=1&another=2;jsessionid=1E6FEC0D14D044541DD84D2D013D29ED",
        "http://www.foo.com/foo.html?another=2&param=1",
    ),
    ("http://foo.com/foo.php?PHPSESSID=cdc993a493e899bed04f4d0c8a462a03", "http://foo.com/foo.php"),
    (
        "http://foo.com/foo.php?f=2&PHPSESSID=cdc993a493e899bed04f4d0c8a462a03&q=3",
        "http://foo.com/foo.php?f=2&q=3",
    ),
    (
        "http://www.foo.com/foo.php?Bv_SessionID=fassassddsajkl&x=y",
        "http://www.foo.com/foo.php?x=y",
    ),
    (
        "http://www.foo.com/foo.html?_sessionID=824A6C0A13a7e11205wxN28F44E3",
        "http://www.foo.com/foo.html",
    ),
    ("http://x.com/a;JSESSIONID=abc.node1;b=1/c", "http://x.com/a;b=1/c"),
    ("http://x.com/a/;jsessionid=abc", "http://x.com/a"),
    ("http://x.com/a;%6Asessionid=abc", "http://x.com/a"),
    ("http://x.com/a;jsessionid=1/./b", "http://x.com/a/b"),
    ("http://x.com/a?PHPSESSID", "http://x.com/a"),
    # a `sid` only with a 32-character value (Heritrix): a sid is often a story's id
    ("http://x.com/a?_sid=587fba8f825b05844526519fdb7d75c8&b=35", "http://x.com/a?b=35"),
    ("http://x.com/a?sid=587FBA8F825B05844526519FDB7D75C8", "http://x.com/a"),
    ("http://x.com/article.pl?sid=05/01/01/1234", "http://x.com/article.pl?sid=05/01/01/1234"),
    ("http://x.com/a?sid=xyz&x=1", "http://x.com/a?sid=xyz&x=1"),
    ("http://x.com/a;sid=587fba8f825b05844526519fdb7d75c8", "http://x.com/a"),
    # classic ASP (Heritrix), ColdFusion's CFID and CFTOKEN only together (Heritrix)
    ("http://x.com/a?ASPSESSIONIDAQBSDSRT=EOHBLBDDPFCLHKPGGKLILNAM&p=2", "http://x.com/a?p=2"),
    ("http://x.com/boo?CFID=1169580&CFTOKEN=48630702&dt=22", "http://x.com/boo?dt=22"),
    ("http://x.com/boo?CFID=1169580&dt=22", "http://x.com/boo?CFID=1169580&dt=22"),
    # names that merely contain one are kept (Nutch's NUTCH-706, NUTCH-1328)
    ("http://x.com/n.aspx?NewsID=1567539", "http://x.com/n.aspx?NewsID=1567539"),
    ("http://x.com/a?usersessionid=1&xsid=2", "http://x.com/a?usersessionid=1&xsid=2"),
    # fragment dropped
    ("http://example.com/a#section", "http://example.com/a"),
    ("http://example.com/a?b=1#c?d=2", "http://example.com/a?b=1"),
    ("http://example.com/#", "http://example.com/"),
    ("http://example.com/a#\u00e9 x", "http://example.com/a"),
]


@pytest.mark.parametrize(("url", "expected"), GOLDEN)
def test_golden(url: str, expected: str) -> None:
    assert normalize_url(url) == expected
    assert normalize_url(expected) == expected


RESOLVE = [
    ("../c", "http://example.com/a/b/d", "http://example.com/a/c"),
    ("c", "http://example.com/a/b/", "http://example.com/a/b/c"),
    ("/c?x=1", "http://example.com/a/b", "http://example.com/c?x=1"),
    ("?q=1", "http://example.com/a/b?old=1#f", "http://example.com/a/b?q=1"),
    ("#frag", "http://example.com/a/b?x=1", "http://example.com/a/b?x=1"),
    ("", "http://example.com/a/b?x=1#f", "http://example.com/a/b?x=1"),
    ("//cdn.example.net/x.js", "https://example.com/", "https://cdn.example.net/x.js"),
    ("///cdn.example.net/x.js", "https://example.com/", "https://cdn.example.net/x.js"),
    ("https://other.org/x", "http://example.com/", "https://other.org/x"),
    ("http:c", "http://example.com/a/b", "http://example.com/a/c"),
    ("http:/c", "http://example.com/a/b", "http://example.com/c"),
    ("https:c", "http://example.com/a/b", "https://c/"),
    ("../../../../g", "http://example.com/a/b/c", "http://example.com/g"),
    ("x y/é", "http://example.com/a/", "http://example.com/a/x%20y/%C3%A9"),
    ("\\foo\\bar", "http://example.com/a/", "http://example.com/foo/bar"),
    ("c", "HTTP://User@Example.COM:80/a/b", "http://example.com/a/c"),
    ("c?utm_source=x", "http://example.com/a/b", "http://example.com/a/c"),
]


@pytest.mark.parametrize(("url", "base", "expected"), RESOLVE)
def test_resolve_against_base(url: str, base: str, expected: str) -> None:
    assert normalize_url(url, base) == expected


def test_keep_trailing_slash() -> None:
    assert normalize_url("http://example.com/a/", keep_trailing_slash=True) == (
        "http://example.com/a/"
    )
    assert normalize_url("http://example.com/a/b/..", keep_trailing_slash=True) == (
        "http://example.com/a/"
    )
    assert normalize_url("c/", "http://example.com/a/", keep_trailing_slash=True) == (
        "http://example.com/a/c/"
    )
    assert normalize_url("http://example.com", keep_trailing_slash=True) == "http://example.com/"


INVALID = [
    # other schemes, and no scheme at all without a base
    ("ftp://example.com/", "scheme"),
    ("file:///etc/passwd", "scheme"),
    ("javascript:alert(1)", "scheme"),
    ("mailto:someone@example.com", "scheme"),
    ("data:text/html,hi", "scheme"),
    ("ws://example.com/", "scheme"),
    ("\uff48\uff54\uff54\uff50://example.com/", "relative"),
    ("/a/b", "relative"),
    ("example.com/a", "relative"),
    ("//example.com/a", "relative"),
    ("", "relative"),
    ("   ", "relative"),
    # empty host
    ("http://", "empty host"),
    ("http:", "empty host"),
    ("http:///", "empty host"),
    ("http://:80/", "empty host"),
    ("http://user@/x", "empty host"),
    ("http://?q=1", "empty host"),
    ("http://%C2%AD/", "empty host"),
    # bad host
    ("http://exa mple.com/", "space"),
    ("http://a*b.com/", "bad host"),
    ("http://a..b.com/", "bad host"),
    ("http://.example.com/", "bad host"),
    ("http://example.com../", "bad host"),
    ("http://ex%ample.com/", "percent"),
    ("http://ex%2ample.com/", "percent"),
    ("http://%80.com/", "UTF-8"),
    ("http://ho%3Ast/", "bad host"),
    ("http://a" + "b" * 63 + ".com/", "bad host"),
    ("http://" + "a." * 126 + "com/", "bad host"),
    # invalid IDNA
    ("http://xn--a.com/", "A-label"),
    ("http://xn--zca-.com/", "A-label"),
    ("http://xn--tešla.com/", "A-label"),
    ("http://\u200d.example/", "IDNA"),
    ("http://\ufffd.com/", "IDNA"),
    ("http://يa.com/", "IDNA"),
    ("http://\u2603.com/", "IDNA"),
    # IPv4-looking hosts that are not IPv4 addresses
    ("http://256.0.0.1/", "IPv4"),
    ("http://1.2.3.4.5/", "IPv4"),
    ("http://0x100000000/", "IPv4"),
    ("http://foo.09/", "IPv4"),
    ("http://1.2.3.08/", "IPv4"),
    # IPv6 literals that do not parse
    ("http://[::1/", "IPv6"),
    ("http://[:::1]/", "IPv6"),
    ("http://[1::2::3]/", "IPv6"),
    ("http://[fe80::1%25eth0]/", "IPv6"),
    ("http://[::1]x/", "IPv6"),
    ("http://[v1.x]/", "IPv6"),
    ("http://[1.2.3.4]/", "IPv6"),
    ("http://[]/", "IPv6"),
    ("http://2001:db8::1/", "port"),
    # ports
    ("http://example.com:http/", "port"),
    ("http://example.com:65536/", "port"),
    ("http://example.com:-1/", "port"),
    ("http://example.com:\uff18\uff10/", "port"),
    ("http://example.com:80:80/", "port"),
    # control characters and whitespace inside the URL
    ("http://example.com/a\tb", "control"),
    ("http://example.com/a\nb", "control"),
    ("http://exam\rple.com/", "control"),
    ("http://example.com/\x00a", "control"),
    ("http://example.com/\x7f", "control"),
    ("http://example.com/\x85", "control"),
    ("http://example.com/?q=\x1bx", "control"),
    ("http://example.com/#\x01x", "control"),
    # not encodable (lone surrogate)
    ("http://example.com/\ud800", "surrogate"),
    ("http://example.com/?q=\udfff", "surrogate"),
    ("http://ex\ud800ample.com/", "surrogate"),
    # too long, before or after normalisation
    ("http://example.com/" + "a" * MAX_URL_LENGTH, "too long"),
    ("http://example.com/" + "\u00e9" * 1000, "too long"),
]


@pytest.mark.parametrize(("url", "why"), INVALID)
def test_invalid(url: str, why: str) -> None:
    with pytest.raises(InvalidURL) as caught:
        normalize_url(url)
    assert caught.value.reason


@pytest.mark.parametrize("value", [None, b"http://example.com/", 42, ["http://example.com/"]])
def test_non_string_is_invalid(value: Any) -> None:
    with pytest.raises(InvalidURL, match="not a string"):
        normalize_url(value)


@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("a", "ftp://example.com/"),
        ("a", "not a url"),
        ("a", "http://"),
        ("a", b"http://example.com/"),
        ("a", "http://example.com/\na"),
        ("a\x00b", "http://example.com/"),
    ],
)
def test_bad_base_or_reference_is_invalid(url: str, base: Any) -> None:
    with pytest.raises(InvalidURL):
        normalize_url(url, base)


def test_absolute_url_ignores_base() -> None:
    assert normalize_url("http://example.com/a", "ftp://elsewhere/") == "http://example.com/a"


def test_invalid_url_is_a_frontier_value_error() -> None:
    error = InvalidURL("because", "http://x")
    assert isinstance(error, FrontierError)
    assert isinstance(error, ValueError)
    assert error.reason == "because"


def test_url_hash() -> None:
    digest = url_hash("http://example.com/")
    assert digest == "2a1b402420ef46577471cdc7409b0fa2c6a204db316e59ade2d805435489a067"
    assert digest == hashlib.sha256(b"http://example.com/").hexdigest()
    assert len(digest) == 64
    assert set(digest) <= set(string.hexdigits.lower())
    assert url_hash(normalize_url("HTTP://Example.com:80/#x")) == digest


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://Example.com/a", "example.com"),
        ("https://example.com:443/a", "example.com"),
        ("http://example.com:8080/a", "example.com:8080"),
        ("https://[::1]:8443/", "[::1]:8443"),
        ("http://bücher.de/", "xn--bcher-kva.de"),
        ("http://user:pw@127.1:81/", "127.0.0.1:81"),
    ],
)
def test_url_host(url: str, host: str) -> None:
    assert url_host(normalize_url(url)) == host


@pytest.mark.parametrize("value", ["example.com", "ftp://example.com/", "http:///", None])
def test_url_host_refuses_what_is_not_normalised(value: Any) -> None:
    with pytest.raises(InvalidURL):
        url_host(value)


def test_tracking_deny_list_never_holds_meaningful_names() -> None:
    for name in ("ref", "source", "id", "page", "q", "s", "from", "utm"):
        assert not is_tracking_param(name)
    assert is_tracking_param("utm_anything")
    assert all(name == name.lower() for name in TRACKING_PARAMS)


# --- the shared corpus ----------------------------------------------------------------


def _numbered(prefix: str, items: list[Any]) -> list[Any]:
    """pytest params whose ids carry the vector's number and the vector count."""
    count = len(items)
    return [pytest.param(*item, id=f"{prefix}-{i:03d}of{count}") for i, item in enumerate(items, 1)]


def _csv_rows(name: str) -> list[list[str]]:
    path = URLS / "crawler-commons" / name
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as handle:
        lines = [line for line in handle if line.strip() and not line.startswith("#")]
    return list(csv.reader(lines, skipinitialspace=True))


def _json_objects(name: str) -> list[dict[str, Any]]:
    path = URLS / "wpt" / name
    if not path.exists():
        return []
    entries = json.loads(path.read_text(encoding="utf-8"))
    return [entry for entry in entries if isinstance(entry, dict)]


def _refused(url: str, base: str | None = None) -> bool:
    try:
        normalize_url(url, base)
    except InvalidURL:
        return True
    return False


def _has_inner_control(text: str) -> bool:
    inner = text.strip("".join(chr(i) for i in range(0x21)))
    return any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in inner)


_URLTESTDATA = _json_objects("urltestdata.visible.json")

# Every WHATWG failure vector is refused: the http(s) ones by the host, port and IPv6 rules,
# all others because their scheme is not http(s) or they are relative without a usable base.
# No failure vector is excluded.
_WPT_FAILURES = [(e["input"], e["base"]) for e in _URLTESTDATA if e.get("failure")]


@pytest.mark.parametrize(("url", "base"), _numbered("wpt-fail", _WPT_FAILURES))
def test_wpt_failure_vectors_are_refused(url: str, base: str | None) -> None:
    with pytest.raises(InvalidURL):
        normalize_url(url, base)


# Vectors WHATWG parses into an http(s) URL: normalising the input (against its base) and
# normalising the expected href must agree. Differences by design are explicit:
# - a control character inside the URL is refused here, where WHATWG strips tabs and
#   newlines and encodes the rest (checked: such inputs must be refused);
# - a host IDNA 2008 refuses is refused on both sides (checked: both refused);
# - the list below, for differences that are neither.
_WPT_HREF_EXCLUDED = {
    # WHATWG percent-encodes "'" in the query of special URLs; RFC 3986 makes it a
    # sub-delim, which the rules leave as written (only unreserved escapes change).
    "http://host/?'": "' in the query is kept raw",
}
_WPT_HTTP = [
    (e["input"], e["base"], e["href"])
    for e in _URLTESTDATA
    if not e.get("failure") and e["protocol"] in ("http:", "https:")
]


@pytest.mark.parametrize(("url", "base", "href"), _numbered("wpt-href", _WPT_HTTP))
def test_wpt_http_vectors_agree_with_href(url: str, base: str | None, href: str) -> None:
    if url in _WPT_HREF_EXCLUDED:
        # Excluded: check the documented difference instead, so a stale entry shows up.
        assert normalize_url(url, base) != normalize_url(href)
        return
    if _has_inner_control(url) or _refused(href):
        assert _refused(url, base)
    else:
        assert normalize_url(url, base) == normalize_url(href)


_WPT_OTHER = [
    (e["input"], e["base"])
    for e in _URLTESTDATA
    if not e.get("failure") and e["protocol"] not in ("http:", "https:")
]


@pytest.mark.parametrize(("url", "base"), _numbered("wpt-other-scheme", _WPT_OTHER))
def test_wpt_vectors_with_other_schemes_are_refused(url: str, base: str | None) -> None:
    with pytest.raises(InvalidURL):
        normalize_url(url, base)


@pytest.mark.parametrize(
    "url", _numbered("cc-invalid", [row[:1] for row in _csv_rows("invalidUrls.visible.csv")])
)
def test_crawler_commons_invalid_urls_are_refused(url: str) -> None:
    with pytest.raises(InvalidURL):
        normalize_url(url)


# crawler-commons pairs that contradict frontier.urls' rules (docs/architecture.md,
# "Identity"), with the rule they break.
_WEIRD_EXCLUDED = {
    # Controls are refused, not encoded (rule: invalid input raises InvalidURL).
    "http://foo.com/\x01!": "control character refused",
    # Merging repeated slashes is not among the rules, and it is not safe: a path may
    # hold a whole URL (https://web.archive.org/web/2020/http://example.com/).
    "http://foo.com/aa//bb/foo.html": "repeated slashes kept",
    "http://foo.com//aa//bb//foo.html": "repeated slashes kept",
    "http://foo.com////aa////bb//foo.html": "repeated slashes kept",
    # The rules keep blank values ("b=" and "b" stay distinct).
    "http://foo.com/index?a=1&b=": "blank value kept",
    "http://foo.com/index?b=&a=1": "blank value kept",
    # The rules drop tracking parameters only; a parameter with an empty name is kept.
    "http://foo.com/index?&=1&a=1": "empty-named parameter kept",
}
_WEIRD = _csv_rows("weirdToNormalizedUrls.visible.csv")


@pytest.mark.parametrize(("weird", "normal"), _numbered("cc-weird", _WEIRD))
def test_crawler_commons_weird_urls_hash_like_their_normal_form(weird: str, normal: str) -> None:
    if weird in _WEIRD_EXCLUDED:
        # Excluded: check the documented difference instead, so a stale entry shows up.
        assert _refused(weird) or normalize_url(weird) != normalize_url(normal)
        return
    if not normal.startswith(("http://", "https://")):
        # file:, ftp: and host-less "http:/" pairs: both sides are refused here.
        assert _refused(weird)
        assert _refused(normal)
        return
    assert url_hash(normalize_url(weird)) == url_hash(normalize_url(normal))


_RESOLVE = _csv_rows("url-resolve.visible.csv")


@pytest.mark.parametrize(("url", "base", "expected"), _numbered("cc-resolve", _RESOLVE))
def test_crawler_commons_resolution(url: str, base: str, expected: str) -> None:
    if not expected.startswith(("http://", "https://")):
        # file: base and result: refused on both sides.
        assert _refused(url, base or None)
        assert _refused(expected)
        return
    assert normalize_url(url, base or None) == normalize_url(expected)


def _dns_valid(host: str) -> bool:
    name = host.removesuffix(".")
    labels = name.split(".")
    return 0 < len(name) <= 253 and all(0 < len(label) <= 63 for label in labels)


# ToASCII vectors whose output this normaliser refuses on purpose, and why:
# - outputs that are not DNS names (an empty label, a label over 63 or a name over 253
#   characters: `frontier.hostnames` only keeps hosts that could resolve), by `_dns_valid`;
# - inputs IDNA 2008 (the `idna` package) refuses where UTS #46 with
#   UseSTD3ASCIIRules=false accepts them: symbols (U+2020, U+2260, U+226F...) and
#   non-ASCII labels starting or ending with a hyphen. Listed here:
_TOASCII_IDNA2008_REFUSED = {"-†", "a†--", "≠", "≮", "≯"}
_TOASCII = [(e["input"], e["output"]) for e in _json_objects("toascii.visible.json")]


@pytest.mark.parametrize(("host", "expected"), _numbered("wpt-toascii", _TOASCII))
def test_wpt_toascii_hosts(host: str, expected: str | None) -> None:
    url = f"http://{host}/"
    if expected is None or host in _TOASCII_IDNA2008_REFUSED or not _dns_valid(expected):
        assert _refused(url)
    else:
        assert url_host(normalize_url(url)) == expected.removesuffix(".")


# --- properties -----------------------------------------------------------------------

_LABELS = st.sampled_from(
    [
        "example",
        "www",
        "EXAMPLE",
        "bücher",
        "xn--bcher-kva",
        "faß",
        "日本",
        "a-b",
        "a_b",
        "0x7f",
        "127",
        "09",
        "-x",
        "xn--a",
        "ß",
        "\u200d",
        "%41",
        "%2e",
        "a%",
        "\uff45\uff58",
        "ي",
        "1",
    ]
)
_HOSTS = st.one_of(
    st.lists(_LABELS, min_size=1, max_size=4).map(".".join),
    st.text(min_size=1, max_size=12),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda ip: f"[{ip}]"),
    st.sampled_from(["[::1", "[fe80::1%25x]", "a.b.", "a..b", "", "[::ffff:1.2.3.4]"]),
)
# Path segments that normalisation treats specially (dot segments, escapes, characters
# sent escaped or refused), shared with test_urls_fast_path.py's generator.
ODD_SEGMENTS = (
    *(".", "..", "...", ".a", "a.", "", "a", "B", "~", "+", ";x=1", ";jsessionid=A1"),
    *("a;JSessionID=B2.n1", ".;jsessionid=", "..;phpsessid=1;x=2"),
    *("%2e", "%2E%2e", "%2E%2E", "%41", "%7e", "%2F", "%2f", "%25", "%", "%zz", "%c3%a9"),
    *("é", " ", "a b", "[x]", "{}", "|", "\\", '"', "^", "`", "?", "#"),
    *("\t", "\x00", "\x7f", "\x85", "\ud800"),
)
# Session identifiers (frontier.session_ids) and names that are not one.
SESSION_NAMES = ("PHPSESSID", "jsessionid", "_sessionID", "sid", "cfid", "CFTOKEN", "newsid")
_SEGMENTS = st.one_of(st.sampled_from(ODD_SEGMENTS), st.text(max_size=6))
_PARAMS = st.tuples(
    st.sampled_from(
        [
            "a",
            "b",
            "A",
            "utm_source",
            "UTM_medium",
            "fbclid",
            "gclid",
            "ref",
            "id",
            "",
            "%61",
            "utm%5Fx",
            "q",
            "a+b",
            "%26",
            *SESSION_NAMES,
        ]
    ),
    st.sampled_from(
        [None, "", "1", "x y", "%2", "é", "=", "a=b", "%3D", "587fba8f825b05844526519fdb7d75c8"]
    ),
)


@st.composite
def _urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "Https", "ftp", ""]))
    slashes = draw(st.sampled_from(["//", "//", "//", "/", "", "///", "\\\\"]))
    userinfo = draw(st.sampled_from(["", "", "user@", "u:p@", "@"]))
    host = draw(_HOSTS)
    port = draw(st.one_of(st.none(), st.integers(0, 70000).map(str), st.just("")))
    path = "/".join(draw(st.lists(_SEGMENTS, max_size=6)))
    params = draw(st.lists(_PARAMS, max_size=5))
    query = "&".join(k if v is None else f"{k}={v}" for k, v in params)
    url = f"{scheme}:{slashes}{userinfo}{host}" + ("" if port is None else f":{port}")
    url += "/" + path if draw(st.booleans()) else path
    if draw(st.booleans()):
        url += "?" + query
    if draw(st.booleans()):
        url += "#" + draw(st.text(max_size=5))
    return url


def _check_normalised(url: str, base: str | None = None, keep: bool = False) -> None:
    try:
        once = normalize_url(url, base, keep_trailing_slash=keep)
    except InvalidURL as exc:
        assert exc.reason
        return
    assert once.isascii()
    assert once.startswith(("http://", "https://"))
    assert len(once) <= MAX_URL_LENGTH
    assert "#" not in once
    assert normalize_url(once, keep_trailing_slash=keep) == once
    assert url_host(once)
    assert len(url_hash(once)) == 64


_PROPERTY_SETTINGS = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@_PROPERTY_SETTINGS
@given(_urls(), st.booleans())
def test_normalisation_is_idempotent(url: str, keep: bool) -> None:
    _check_normalised(url, keep=keep)


_ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=()))  # lone surrogates too


@_PROPERTY_SETTINGS
@given(st.one_of(_ANY_TEXT, _ANY_TEXT.map("http://".__add__)), st.booleans())
def test_random_text_raises_only_invalid_url(url: str, keep: bool) -> None:
    _check_normalised(url, keep=keep)


@_PROPERTY_SETTINGS
@given(
    st.one_of(st.lists(_SEGMENTS, max_size=5).map("/".join), st.text(max_size=20)),
    _urls(),
)
def test_resolution_is_idempotent(reference: str, base: str) -> None:
    _check_normalised(reference, base)


def _corpus_inputs() -> Iterator[str]:
    for entry in _URLTESTDATA:
        yield entry["input"]
    for row in _WEIRD:
        yield from row


def test_corpus_inputs_are_idempotent_or_refused() -> None:
    for url in _corpus_inputs():
        _check_normalised(url)
        _check_normalised(url, keep=True)


def _separately(url: str, base: str | None, keep: bool) -> tuple[str, str] | str:
    try:
        return normalize_url(url, base, keep_trailing_slash=keep), request_spelling(url, base)
    except InvalidURL as exc:
        return exc.reason


def _together(url: str, base: str | None, keep: bool) -> tuple[str, str] | str:
    try:
        return identity_and_spelling(url, base, keep_trailing_slash=keep)
    except InvalidURL as exc:
        return exc.reason


@_PROPERTY_SETTINGS
@given(_urls(), st.one_of(st.none(), _urls()), st.booleans())
def test_identity_and_spelling_is_normalize_url_and_request_spelling(
    url: str, base: str | None, keep: bool
) -> None:
    """The bulk submit path's one normalisation gives what the two functions give apart,
    refusals and their reasons included."""
    assert _together(url, base, keep) == _separately(url, base, keep)
    normal = _separately(url, base, True)
    if isinstance(normal, tuple):  # the input already normalised: the spelling is the same
        assert _together(normal[0], None, keep) == _separately(normal[0], None, keep)


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("http://example.com/a/", None),
        ("http://example.com/a//?x=/y/", None),
        ("http://example.com//", None),
        ("http://example.com", None),
        ("HTTP://Example.COM/a/b/../c/?utm_source=x&q=1#f", None),
        ("../up/", "http://example.com/a/b/"),
        ("http:/odd/path/", None),
        ("http://example.com/" + "a" * (MAX_URL_LENGTH - 19) + "/", None),
    ],
)
def test_identity_and_spelling_on_slashes(url: str, base: str | None, keep: bool) -> None:
    assert _together(url, base, keep) == _separately(url, base, keep)


# --- session identifiers: never in the identity, always in the request spelling ---------

_SESSION_QUERY = st.sampled_from(
    [
        "PHPSESSID=cdc993a493e899bed04f4d0c8a462a03",
        "phpsessid=x",
        "jsessionid=1E6FEC0D14D044541DD84D2D013D29ED",
        "_sessionid=qmyrcedt",
        "Bv_SessionID=fassassddsajkl",
        "sid=587fba8f825b05844526519fdb7d75c8",
        "_sid=587FBA8F825B05844526519FDB7D75C8",
        "ASPSESSIONIDAQBSDSRT=EOHBLBDDPFCLHKPGGKLILNAM",
    ]
)
_SESSION_PATH = st.sampled_from(
    [";jsessionid=1E6FEC0D14D044541DD84D2D013D29ED", ";JSESSIONID=abc.node1", ";phpsessid=9"]
)
_SESSION_MARKS = re.compile(
    r"sessionid|phpsessid|[?&;]_?sid=[0-9a-z]{32}|aspsessionid|cfid=.*cftoken=", re.IGNORECASE
)


@st.composite
def _session_urls(draw: st.DrawFn) -> tuple[str, str]:
    """A URL without a session and the same URL with sessions written into it."""
    segments = draw(st.lists(st.sampled_from(["a", "b.html", "x;v=1", "", "%41"]), max_size=3))
    params = draw(st.lists(st.sampled_from(["q=1", "tag=b", "sid=42", "p", "x=cfid"]), max_size=3))
    plain = "http://example.com/" + "/".join(segments)
    session_path = draw(st.lists(_SESSION_PATH, max_size=2))
    sessions = draw(st.lists(_SESSION_QUERY, max_size=2))
    where = draw(st.integers(0, len(params)))
    with_session = plain + "".join(session_path)
    mixed = params[:where] + sessions + params[where:]
    if draw(st.booleans()):
        mixed += ["CFID=1169580", "CFTOKEN=48630702"]
    if params:
        plain += "?" + "&".join(params)
    if mixed:
        with_session += "?" + "&".join(mixed)
    return plain, with_session


@_PROPERTY_SETTINGS
@given(_session_urls(), st.booleans())
def test_session_identifiers_never_reach_the_identity(urls: tuple[str, str], keep: bool) -> None:
    plain, with_session = urls
    identity = normalize_url(with_session, keep_trailing_slash=keep)
    assert identity == normalize_url(plain, keep_trailing_slash=keep)
    assert _SESSION_MARKS.search(identity) is None
    assert normalize_url(identity, keep_trailing_slash=keep) == identity


@_PROPERTY_SETTINGS
@given(_session_urls())
def test_the_request_spelling_keeps_the_sessions_as_written(urls: tuple[str, str]) -> None:
    """`fetch_url` is what the server gave: its session stays, so the server finds it."""
    _plain, with_session = urls
    assert request_spelling(with_session) == with_session
    assert identity_and_spelling(with_session) == (normalize_url(with_session), with_session)
