"""The fast path of `frontier.urls.identity_and_spelling`: a URL already in normal form is
returned as it is, without the general path; it must give exactly what the general path
(`_identity_and_spelling_slow`) gives, refusals and their reasons included.
"""

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import frontier.urls
from frontier.urls import (
    MAX_URL_LENGTH,
    InvalidURL,
    _identity_and_spelling_slow,
    identity_and_spelling,
)
from tests.corpus_path import CORPUS
from tests.unit.test_urls import ODD_SEGMENTS

_Outcome = tuple[str, str] | tuple[str]


def _outcome(function: Callable[..., tuple[str, str]], url: Any, keep: bool) -> _Outcome:
    try:
        identity, spelling = function(url, keep_trailing_slash=keep)
    except InvalidURL as exc:
        return (exc.reason,)
    assert type(identity) is str and type(spelling) is str
    return identity, spelling


def _check_agrees(url: Any, keep: bool) -> _Outcome:
    fast = _outcome(identity_and_spelling, url, keep)
    assert fast == _outcome(_identity_and_spelling_slow, url, keep)
    return fast


def _check_agrees_with_normal_forms(url: Any, keep: bool) -> None:
    """`url` and (mostly fast-path material) its normalised forms and spelling."""
    outcome = _check_agrees(url, keep)
    for spelling in outcome[:2] if len(outcome) == 2 else ():
        for keep_again in (False, True):
            _check_agrees(spelling, keep_again)


# --- which URLs take the fast path ----------------------------------------------------

_HOST_253 = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 61])
_LONGEST = "https://example.com/" + "x" * (MAX_URL_LENGTH - len("https://example.com/"))

# Already normal, in both modes: `identity_and_spelling` returns them without the general path.
FIXED_POINTS = [
    "https://www.host16545.example/2026/01/06/library-review-budget-library-0",
    "http://example.com/",
    "https://example.com/a",
    "https://example.com/a//b",
    "https://example.com//a",
    "https://example.com/Path/File.HTML",
    "http://example.com:8080/a",
    "http://example.com:1/",
    "https://example.com:65535/",
    "https://example.com:8443/a",
    "http://localhost/x",
    "http://my_host.example.com/a_b",
    "https://r3---sn-ab5l6n7s.googlevideo.com/videoplayback",
    "https://-x.example/",  # ASCII labels are kept as written, hyphens included
    "https://123.example/a",
    "https://a1.b2.c3/",
    "https://fooxn--bar.example/",  # "xn--" inside a label is no A-label
    "https://example.com/.well-known/security.txt",
    "https://example.com/.../..a/a../.a./a.b",
    "https://example.com/~user/a,b=c,d!$&'()*+:@-_",
    "https://" + "a" * 63 + ".com/",
    f"https://{_HOST_253}/",
    _LONGEST,
]

# Normal only where the trailing slash is kept.
FIXED_POINTS_KEEPING_SLASH = [
    "https://example.com/a/",
    "https://example.com/a//",
    "https://example.com//",
    "http://example.com:8080/a/b/",
]

# Left to the general path, normal or not (some are normal but not provably so cheaply).
GENERAL_PATH = [
    "https://example.com",  # no path: "/" is added
    "https://example.com:8080",
    "HTTPS://example.com/",
    "Https://example.com/",
    "ftp://example.com/",
    "httpss://example.com/",
    "http:/example.com/",
    "http:///example.com/",
    "http:example.com/",
    "https:\\\\example.com\\",
    "https://user@example.com/",
    "https://@example.com/",
    "https://u:p@example.com/",
    " https://example.com/",
    "https://example.com/ ",
    "https://example.com/\n",
    "\x00https://example.com/",
    "https://example.com/a\x7fb",
    "https://Example.com/",
    "https://example.COM/",
    "https://bücher.de/",
    "https://example%2Ecom/",
    "https://example.com./",
    "https://a..b/",
    "https://.a/",
    "https://xn--bcher-kva.de/",  # normal, but an A-label is checked
    "https://xn--a.com/",
    "https://a.xn--p1ai/",
    "https://127.0.0.1/",
    "https://127.1/",
    "https://2130706433/",
    "https://foo.09/",
    "https://a.0x7f/",
    "https://example.1com/",  # normal, but the last label starts with a digit
    "https://[::1]/",
    "https://[::1]:8080/",
    "https://" + "a" * 64 + ".com/",
    f"https://{_HOST_253}x/",
    "https://example.com:443/",
    "http://example.com:80/",
    "https://example.com:80/",  # normal, but 80 and 443 are left alone whatever the scheme
    "http://example.com:443/",
    "http://example.com:080/",
    "http://example.com:0/",
    "http://example.com:65536/",
    "http://example.com:99999/",
    "http://example.com:/",
    "http://example.com:x/",
    "https://example.com/a/./b",
    "https://example.com/a/../b",
    "https://example.com/a/..",
    "https://example.com/a/.",
    "https://example.com/.",
    "https://example.com/..",
    "https://example.com/%7Euser",
    "https://example.com/a%2Fb",
    "https://example.com/a%2fb",
    "https://example.com/%",
    "https://example.com/a b",
    "https://example.com/é",
    "https://example.com/a\\b",
    "https://example.com/a|b",
    'https://example.com/"a"',
    "https://example.com/[a]",
    "https://example.com/~user/a;b=c,d!$&'()*+:@-_",  # normal, but a ";" may start a session
    "https://example.com/a;jsessionid=1E6FEC0D14D044541DD84D2D013D29ED",
    "https://example.com/a?b=1",
    "https://example.com/a?",
    "https://example.com/a#f",
    "https://example.com/a#",
    _LONGEST + "x",
]


@pytest.fixture
def general_path_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs `identity_and_spelling` hands to the general path."""
    calls: list[str] = []

    def recording(url: str, base: str | None = None, *, keep_trailing_slash: bool = False):
        calls.append(url)
        return _identity_and_spelling_slow(url, base, keep_trailing_slash=keep_trailing_slash)

    monkeypatch.setattr(frontier.urls, "_identity_and_spelling_slow", recording)
    return calls


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("url", FIXED_POINTS)
def test_fast_path_takes_normal_urls(url: str, keep: bool, general_path_calls: list[str]) -> None:
    assert identity_and_spelling(url, keep_trailing_slash=keep) == (url, url)
    assert general_path_calls == []
    assert _identity_and_spelling_slow(url, keep_trailing_slash=keep) == (url, url)


@pytest.mark.parametrize("url", FIXED_POINTS_KEEPING_SLASH)
def test_fast_path_takes_a_trailing_slash_only_where_it_is_kept(
    url: str, general_path_calls: list[str]
) -> None:
    assert identity_and_spelling(url, keep_trailing_slash=True) == (url, url)
    assert general_path_calls == []
    assert _identity_and_spelling_slow(url, keep_trailing_slash=True) == (url, url)
    identity, spelling = identity_and_spelling(url)
    assert general_path_calls == [url]
    assert identity != url
    assert spelling == url


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("url", GENERAL_PATH)
def test_fast_path_leaves_the_rest_to_the_general_path(
    url: str, keep: bool, general_path_calls: list[str]
) -> None:
    _check_agrees(url, keep)
    assert general_path_calls == [url]


@pytest.mark.parametrize("value", [b"https://example.com/", None, 1, ["https://example.com/"]])
def test_non_strings_take_the_general_path(value: Any, general_path_calls: list[str]) -> None:
    assert _check_agrees(value, False)[0].startswith("not a string")
    assert general_path_calls == [value]


def test_a_base_means_the_general_path(general_path_calls: list[str]) -> None:
    url = "https://example.com/a"
    assert identity_and_spelling(url, "https://example.org/") == (url, url)
    assert general_path_calls == [url]


# --- the fast path agrees with the general path ---------------------------------------

_LABEL_CHARS = "abcxyz0189-_"
_LABELS = st.one_of(
    st.text(alphabet=_LABEL_CHARS, min_size=1, max_size=12),
    st.text(alphabet=_LABEL_CHARS + "ABZ.%é_ ", max_size=8),
    st.integers(0, 300).map(str),
    st.sampled_from(
        [
            "www",
            "example",
            "com",
            "xn--",
            "xn--bcher-kva",
            "XN--bcher-kva",
            "xn--a",
            "xn--p1ai",
            "xn--ab--c",
            "a" * 63,
            "a" * 64,
            "0x7f",
            "0X7F",
            "0x",
            "09",
            "0",
            "-",
            "-x",
            "x-",
            "_",
            "bücher",
            "ß",
            "%41",
            "%2e",
            "\uff45\uff58",  # fullwidth "ex"
            "",
        ]
    ),
)
_HOSTS = st.one_of(
    st.lists(_LABELS, min_size=1, max_size=5).map(".".join),
    st.lists(_LABELS, min_size=1, max_size=3).map(lambda labels: ".".join(labels) + "."),
    st.lists(st.sampled_from(["a" * 63, "b" * 62, "c" * 61, "d"]), min_size=3, max_size=5).map(
        ".".join
    ),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda ip: f"[{ip}]"),
    st.sampled_from(["", "[::1", "[::1]x", "localhost", "127.1", "a.b.c.d.e", "1.2.3.4.5"]),
)
_PORTS = st.one_of(
    st.none(),
    st.integers(0, 70000).map(str),
    st.sampled_from(["", "0", "1", "80", "443", "080", "0443", "8080", "65535", "65536", "x"]),
)
_SEGMENTS = st.one_of(
    st.text(alphabet="abcXYZ019-._~!$&'()*+,;=:@", max_size=8),
    st.sampled_from(ODD_SEGMENTS),
    st.text(max_size=4),
)


@st.composite
def _near_normal_urls(draw: st.DrawFn) -> str:
    """URL-like strings, mostly in or near normal form."""
    scheme = draw(st.sampled_from(["https", "http", "https", "http", "HTTP", "Https", "ftp", ""]))
    slashes = draw(st.sampled_from(["//", "//", "//", "//", "/", "", "///", "\\\\"]))
    userinfo = draw(st.sampled_from(["", "", "", "", "user@", "u:p@", "@"]))
    host = draw(_HOSTS)
    port = draw(_PORTS)
    url = f"{scheme}:{slashes}{userinfo}{host}" + ("" if port is None else f":{port}")
    if draw(st.integers(0, 9)):  # mostly a path
        url += "/" + "/".join(draw(st.lists(_SEGMENTS, max_size=6)))
        url += draw(st.sampled_from(["", "", "", "/", "//"]))
    if draw(st.integers(0, 3)) == 0:
        url += "?" + draw(st.sampled_from(["", "a=1", "b=2&a=1", "utm_source=x", "a=%41", "a b"]))
    if draw(st.integers(0, 3)) == 0:
        url += "#" + draw(st.text(max_size=3))
    length = draw(st.sampled_from([None, None, None, MAX_URL_LENGTH - 1, MAX_URL_LENGTH]))
    if length is not None:
        length += draw(st.sampled_from([0, 1]))
        index = url.find("/", url.find("//") + 2)
        if index > 0 and length > len(url):  # lengthen the first path segment
            url = url[: index + 1] + "x" * (length - len(url)) + url[index + 1 :]
    if draw(st.integers(0, 9)) == 0:
        url = draw(st.sampled_from([" ", "\t", "\x00"])) + url
    if draw(st.integers(0, 9)) == 0:
        url += draw(st.sampled_from([" ", "\n", "\x1f"]))
    return url


def _host_of_length(length: int) -> str:
    """A DNS name of `length` characters: labels of 63 or fewer, the last starting ``z``."""
    labels: list[str] = []
    while length > 64:
        labels.append("a" * 63)
        length -= 64
    if length < 1:  # cannot happen for the lengths drawn below
        raise ValueError(length)
    return ".".join([*labels, "z" * length])


_NORMAL_LABEL = st.text(alphabet="abcxyz0189-_", min_size=1, max_size=12).filter(
    lambda label: not label.startswith("xn--")
)
_NORMAL_LAST_LABEL = st.builds(
    str.__add__, st.sampled_from("az"), st.text(alphabet="az09-_", max_size=10)
)
_A_LABELS = st.sampled_from(
    ["xn--", "xn--a", "xn--ab--c", "xn--zz", "xn--bcher-kva", "XN--bcher-kva", "xn--p1ai"]
)
_ODD_LABELS = st.sampled_from(
    ["", "a" * 64, "0x7f", "0x", "09", "127", "1e", "A", "eX", "ß", "bücher", "%41", "a b", "a:b"]
)
_NORMAL_PARTS: dict[str, st.SearchStrategy[Any]] = {
    "scheme": st.sampled_from(["http", "https"]),
    "slashes": st.just("//"),
    "userinfo": st.just(""),
    "host": st.one_of(
        st.builds(
            lambda labels, last: ".".join([*labels, last]),
            st.lists(_NORMAL_LABEL, max_size=4),
            _NORMAL_LAST_LABEL,
        ),
        st.integers(1, 253).map(_host_of_length),
        st.sampled_from(["a" * 63 + ".com", "localhost", "-x.example", "my_host.example"]),
    ),
    "port": st.one_of(
        st.just(""),
        st.integers(1, 65535).filter(lambda port: port not in (80, 443)).map(":{}".format),
    ),
    "path": st.one_of(
        st.just("/"),
        st.lists(
            st.text(alphabet="abXY09-._~!$&'()*+,;=:@", max_size=8).filter(
                lambda segment: segment not in (".", "..")
            ),
            min_size=1,
            max_size=5,
        )
        .map(lambda segments: "/" + "/".join(segments))
        .filter(lambda path: path == "/" or not path.endswith("/")),
    ),
    "query": st.just(""),
    "fragment": st.just(""),
    "lead": st.just(""),
    "trail": st.just(""),
    "length": st.sampled_from([0, 0, 0, MAX_URL_LENGTH - 1, MAX_URL_LENGTH]),
}
_ODD_PARTS: dict[str, st.SearchStrategy[Any]] = {
    "scheme": st.sampled_from(["HTTP", "Https", "hTTp", "ftp", "", "httpss", "h"]),
    "slashes": st.sampled_from(["/", "", "///", "\\", "\\/", "/\\"]),
    "userinfo": st.sampled_from(["user@", "u:p@", "@", "a@b@", "%40@"]),
    "host": st.one_of(
        st.builds(
            lambda labels, odd, index: ".".join([*labels[:index], odd, *labels[index:]]),
            st.lists(_NORMAL_LABEL, max_size=3),
            st.one_of(_ODD_LABELS, _LABELS),
            st.integers(0, 3),
        ),
        st.builds(
            lambda labels, odd, index: ".".join([*labels[:index], odd, *labels[index:]]),
            st.lists(_NORMAL_LABEL, max_size=3),
            _A_LABELS,
            st.integers(0, 3),
        ),
        st.integers(64, 70).map(lambda n: "a" * n + ".com"),
        st.integers(254, 260).map(_host_of_length),
        st.integers(1, 8).map(lambda n: _host_of_length(n) + "."),
        st.ip_addresses(v=4).map(str),
        st.ip_addresses(v=6).map(lambda ip: f"[{ip}]"),
        st.sampled_from(["Example.com", "EXAMPLE.COM", "a.1com", "a.0x7f", "a.09", "127.1"]),
        st.sampled_from(["a..b", ".a", "", "xn--bcher-kva.de", "a.xn--p1ai", "a b", "a%2eb"]),
    ),
    "port": st.one_of(
        st.sampled_from([":", ":0", ":80", ":443", ":080", ":0443", ":65536", ":x", ":8080a"]),
        st.integers(65536, 10**6).map(":{}".format),
    ),
    "path": st.one_of(
        st.sampled_from(["", "/a/", "/a//", "//", "/.", "/..", "/a/.", "/a/..", "/./a"]),
        st.sampled_from(["/a/../b", "/%41", "/%2F", "/%2f", "/%", "/a b", "/é", "/a\\b"]),
        st.sampled_from(["/|", "/[a]", '/"', "/^", "/`", "/{}", "/\t", "/\x7f", "/\ud800"]),
        st.text(max_size=6).map("/".__add__),
    ),
    "query": st.sampled_from(["?", "?a=1", "?b=2&a=1", "?utm_source=x", "?a=%41"]),
    "fragment": st.sampled_from(["#", "#f", "#a b"]),
    "lead": st.sampled_from([" ", "\t", "\x00", "\n "]),
    "trail": st.sampled_from([" ", "\n", "\x1f", "\x00"]),
    "length": st.sampled_from([MAX_URL_LENGTH + 1, MAX_URL_LENGTH + 2]),
}


@st.composite
def _normal_but(draw: st.DrawFn, odd_parts: st.SearchStrategy[set[str]]) -> str:
    """A URL in normal form but for the parts named by `odd_parts`."""
    odd = draw(odd_parts)
    part = {name: draw((_ODD_PARTS if name in odd else _NORMAL_PARTS)[name]) for name in _ODD_PARTS}
    path = part["path"]
    url = f"{part['scheme']}:{part['slashes']}{part['userinfo']}{part['host']}{part['port']}"
    rest = path + part["query"] + part["fragment"]
    length = int(part["length"])
    if length > len(url) + len(rest) and path.startswith("/"):  # lengthen the first segment
        rest = "/" + "x" * (length - len(url) - len(rest)) + rest[1:]
    return part["lead"] + url + rest + part["trail"]


_SETTINGS = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("odd", sorted(_ODD_PARTS))
@settings(_SETTINGS, max_examples=200)
@given(data=st.data(), keep=st.booleans())
def test_fast_path_agrees_with_the_general_path_on_one_odd_part(
    odd: str, data: st.DataObject, keep: bool
) -> None:
    _check_agrees_with_normal_forms(data.draw(_normal_but(st.just({odd})), label="url"), keep)


@_SETTINGS
@given(_normal_but(st.sets(st.sampled_from(sorted(_ODD_PARTS)), max_size=3)), st.booleans())
def test_fast_path_agrees_with_the_general_path_near_normal_form(url: str, keep: bool) -> None:
    _check_agrees_with_normal_forms(url, keep)


@_SETTINGS
@given(_near_normal_urls(), st.booleans())
def test_fast_path_agrees_with_the_general_path_on_url_like_text(url: str, keep: bool) -> None:
    _check_agrees_with_normal_forms(url, keep)


@settings(_SETTINGS, max_examples=300)
@given(
    st.one_of(
        st.text(),
        st.text().map("https://".__add__),
        st.text(alphabet="abz09.-_:/%?#@ AZ", max_size=30).map("http://".__add__),
    ),
    st.booleans(),
)
def test_fast_path_agrees_with_the_general_path_on_any_text(url: str, keep: bool) -> None:
    _check_agrees_with_normal_forms(url, keep)


def _corpus_inputs() -> Iterator[str]:
    urls = CORPUS / "urls"
    for name in ("urltestdata.visible.json", "toascii.visible.json"):
        path = urls / "wpt" / name
        if path.exists():
            for entry in json.loads(path.read_text(encoding="utf-8")):
                if isinstance(entry, dict):
                    text = entry["input"]
                    yield text if name.startswith("url") else f"http://{text}/"
    for path in sorted((urls / "crawler-commons").glob("*.csv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                yield from (cell.strip() for cell in line.split(","))


def test_fast_path_agrees_with_the_general_path_on_the_corpus() -> None:
    inputs = list(_corpus_inputs())
    assert len(inputs) > 500
    for url in inputs:
        for keep in (False, True):
            _check_agrees_with_normal_forms(url, keep)
