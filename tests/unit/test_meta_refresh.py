"""Meta refresh as a redirect (fetcher/meta_refresh.py): the content attribute read as
browsers read it, and which pages are redirects at all."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fetcher.meta_refresh import NEAR_EMPTY_CHARS, parse_refresh, refresh_target


@pytest.mark.parametrize(
    ("content", "parsed"),
    [
        ("0; url=/a", (0.0, "/a")),
        ("0;URL='/a/'", (0.0, "/a/")),
        ('0; url="/a b"', (0.0, "/a b")),
        ("0;url='/unclosed", (0.0, "/unclosed")),
        ("  5 , url = /a ", (5.0, "/a")),
        ("0 /bare", (0.0, "/bare")),
        ("3,/comma", (3.0, "/comma")),
        ("1.5; url=/c", (1.0, "/c")),  # the integer part, as browsers take it
        (".5;url=/z", (0.0, "/z")),
        ("0;URLX=/y", (0.0, "URLX=/y")),  # not the `url=` prefix: the rest is the URL
        ("0; Url=https://ex.com/x", (0.0, "https://ex.com/x")),
        ("0", (0.0, None)),  # a reload, not a redirect
        ("30;", (30.0, None)),
        ("0; url=", (0.0, None)),
        ("0; URL = ''", (0.0, None)),
        ("", None),
        ("abc", None),
        ("; url=/x", None),
        ("0a; url=/x", None),
        ("-1; url=/x", None),
    ],
)
def test_parse_refresh(content: str, parsed: tuple[float, str | None] | None) -> None:
    assert parse_refresh(content) == parsed


@given(st.text(max_size=80))
def test_parse_refresh_never_raises(content: str) -> None:
    result = parse_refresh(content)
    assert result is None or result[0] >= 0


def page(meta: str, body: str = "Redirecting...") -> bytes:
    return f"<html><head>{meta}</head><body><p>{body}</p></body></html>".encode()


REFRESH = '<meta http-equiv="refresh" content="0; url=/target/">'
BASE = "https://ex.com/old"


@pytest.mark.parametrize(
    ("body", "content_type", "target"),
    [
        (page(REFRESH), "text/html", "https://ex.com/target/"),
        (page(REFRESH), None, "https://ex.com/target/"),
        (page(REFRESH.replace("refresh", "REFRESH")), "text/html", "https://ex.com/target/"),
        (
            page('<meta content="2;URL=\'../x\'" http-equiv="Refresh">'),
            "text/html",
            "https://ex.com/x",
        ),
        (page('<meta http-equiv="refresh" content="5; url=/five">'), None, "https://ex.com/five"),
        (page('<meta http-equiv="refresh" content="6; url=/six">'), None, None),  # too slow
        (page('<meta http-equiv="refresh" content="30">'), None, None),  # a ticker reload
        (page(REFRESH, "word " * (NEAR_EMPTY_CHARS // 4)), None, None),  # a real page
        (
            page(REFRESH + "<script>" + "var x = 1;" * 500 + "</script>"),
            None,
            "https://ex.com/target/",
        ),
        (page(REFRESH), "application/json", None),
        (page('<meta name="refresh" content="0; url=/x">'), None, None),  # not http-equiv
        (page('<meta http-equiv="refresh" content="0; url=javascript:alert(1)">'), None, None),
        (page('<meta http-equiv="refresh" content="0; url=ftp://ex.com/x">'), None, None),
        (page("") + b"refresh", None, None),
        (b"", None, None),
    ],
)
def test_refresh_target(body: bytes, content_type: str | None, target: str | None) -> None:
    assert refresh_target(body, content_type, BASE) == target


def test_only_the_first_refresh_counts() -> None:
    metas = REFRESH + '<meta http-equiv="refresh" content="0; url=/second">'
    assert refresh_target(page(metas), None, BASE) == "https://ex.com/target/"
