"""The pure response decisions: outcome-table rows, Retry-After, charset decoding."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fetcher.decisions import Action, decide, retry_after
from fetcher.encoding import decode_html
from frontier.queue_values import OutcomeKind

HTML = {"Content-Type": "text/html; charset=utf-8"}


@pytest.mark.parametrize(
    ("status", "headers", "body", "kind"),
    [
        (200, HTML, b"<html></html>", OutcomeKind.FETCHED),
        (200, {"Content-Type": "application/xhtml+xml"}, b"<html/>", OutcomeKind.FETCHED),
        (200, {}, b"<!DOCTYPE html><html>", OutcomeKind.FETCHED),
        (200, {"Content-Type": "application/pdf"}, b"%PDF", OutcomeKind.UNSUPPORTED_CONTENT),
        (200, {}, b"\x00\x01binary", OutcomeKind.UNSUPPORTED_CONTENT),
        (304, {}, b"", OutcomeKind.NOT_MODIFIED),
        (301, {"Location": "/b"}, b"", OutcomeKind.REDIRECT),
        (308, {"Location": "/b"}, b"", OutcomeKind.REDIRECT),
        (302, {}, b"", OutcomeKind.RETRY),
        (404, {}, b"", OutcomeKind.NOT_FOUND),
        (410, {}, b"", OutcomeKind.GONE),
        (429, {"Retry-After": "30"}, b"", OutcomeKind.RATE_LIMITED),
        (503, {}, b"", OutcomeKind.RATE_LIMITED),
        (500, {}, b"", OutcomeKind.RETRY),
        (403, {}, b"", OutcomeKind.FORBIDDEN),
        (401, {"WWW-Authenticate": "Basic"}, b"", OutcomeKind.FORBIDDEN),
        (451, {}, b"", OutcomeKind.FORBIDDEN),
    ],
)
def test_outcome_rows(status: int, headers: dict[str, str], body: bytes, kind: OutcomeKind) -> None:
    decision = decide(status, headers, body)
    assert decision.kind is kind
    assert (decision.action is Action.EXTRACT) == (kind is OutcomeKind.FETCHED)


def test_retry_after_forms() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert retry_after("120") == 120.0
    assert retry_after("99999999") == 86_400.0
    assert retry_after("Thu, 01 Jan 2026 00:01:00 GMT", now) == 60.0
    assert retry_after("Wed, 31 Dec 2025 00:00:00 GMT", now) == 0.0
    assert retry_after("soon") is None and retry_after(None) is None
    assert decide(429, {"Retry-After": "7"}, b"").retry_after_s == 7.0


def test_charset_header_then_meta_then_detection() -> None:
    latin = "café".encode("latin-1")
    assert decode_html(latin, "text/html; charset=ISO-8859-1") == ("café", "cp1252")
    meta = b"<meta charset='windows-1252'>" + latin
    assert decode_html(meta, "text/html")[0].endswith("café")
    assert decode_html("naïve".encode(), None) == ("naïve", "utf-8")
    assert decode_html(b"\xef\xbb\xbfhi", "text/html; charset=latin-1")[0] == "hi"
    text, _ = decode_html(("<p>" + "Größe und Maß " * 50 + "</p>").encode("cp1252"), None)
    assert "Größe" in text
    assert decode_html(b"ok", "text/html; charset=bogus")[0] == "ok"


@pytest.mark.parametrize(
    ("body", "content_type", "text", "encoding"),
    [
        # WHATWG labels: what browsers decode these as
        (
            "\u201cx\u201d".encode("cp1252"),
            "text/html; charset=iso-8859-1",
            "\u201cx\u201d",
            "cp1252",
        ),
        ("\u2014".encode("cp1252"), "text/html; charset=US-ASCII", "\u2014", "cp1252"),
        ("\u2014".encode("cp1252"), 'text/html; charset="latin1"', "\u2014", "cp1252"),
        ("\u8868".encode("cp932"), "text/html; charset=x-sjis", "\u8868", "cp932"),
        ("\u4e2d".encode("gbk"), "text/html; charset=gb2312", "\u4e2d", "gb18030"),
        # a BOM wins over the header, as in browsers
        (b"\xef\xbb\xbf\xc3\xa9", "text/html; charset=iso-8859-1", "\u00e9", "utf-8"),
        (b"\xff\xfeh\x00i\x00", "text/html; charset=utf-8", "hi", "utf-16-le"),
        # a UTF-8 page behind a latin-1 default header (meta or not) is UTF-8
        ("caf\u00e9".encode(), "text/html; charset=ISO-8859-1", "caf\u00e9", "utf-8"),
        (
            b"<meta charset=latin1>caf\xc3\xa9",
            "text/html",
            "<meta charset=latin1>caf\u00e9",
            "utf-8",
        ),
        # ... but real windows-1252 stays windows-1252
        (
            b"caf\xe9 \x93q\x94",
            "text/html; charset=ISO-8859-1",
            "caf\u00e9 \u201cq\u201d",
            "cp1252",
        ),
        # an unknown label falls through to the next source
        (
            b"<meta charset=utf-8>\xc3\xa9",
            "text/html; charset=bogus",
            "<meta charset=utf-8>\u00e9",
            "utf-8",
        ),
    ],
)
def test_decode_html_reads_labels_as_browsers_do(
    body: bytes, content_type: str, text: str, encoding: str
) -> None:
    assert decode_html(body, content_type) == (text, encoding)


@pytest.mark.parametrize(
    "meta",
    [
        '<meta charset="windows-1252">',
        "<meta charset='windows-1252' />",
        "<meta charset=windows-1252>",
        '<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">',
        '<META CONTENT="text/html;charset=windows-1252" HTTP-EQUIV="content-type">',
        "<meta content='text/html; charset=windows-1252' http-equiv='Content-Type'/>",
    ],
)
def test_decode_html_finds_the_meta_after_a_long_head(meta: str) -> None:
    head = "<html><head><title>t</title><script>" + "var a = 1;" * 150 + "</script>"
    body = (head + meta + "</head><body>\u201cq\u201d \u2013 na\u00efve</body>").encode("cp1252")
    text, encoding = decode_html(body, "text/html")
    assert encoding == "cp1252" and text.endswith("\u201cq\u201d \u2013 na\u00efve</body>")


def test_forbidden_names_who_refused() -> None:
    cloudflare = decide(
        403,
        {"Server": "cloudflare", "cf-mitigated": "challenge"},
        b"<title>Just a moment...</title>",
    )
    # A challenge is a wall in front of the article, not a refusal (tests/unit/test_verdicts.py)
    assert (cloudflare.action, cloudflare.kind) == (Action.FINISH, OutcomeKind.CHALLENGE)
    assert cloudflare.error == "HTTP 403: challenge page: Cloudflare (cf-mitigated: challenge)"
    assert decide(403, {"Server": "AkamaiGHost"}, b"").error == "HTTP 403 (server: AkamaiGHost)"
    login = decide(401, {"WWW-Authenticate": 'Basic realm="Subscribers"'}, b"")
    assert login.error == 'HTTP 401 (WWW-Authenticate: Basic realm="Subscribers")'
    legal = decide(451, {"Link": '<https://a.example/x>; rel="blocked-by"'}, b"")
    assert legal.error == 'HTTP 451 (Link: <https://a.example/x>; rel="blocked-by")'
    assert decide(403, {}, b"").error == "HTTP 403"


def test_a_retry_after_date_is_read_against_the_given_clock() -> None:
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    date = {"Retry-After": "Thu, 01 Jan 2026 12:02:00 GMT"}
    assert decide(429, date, b"", now).retry_after_s == 120.0
    assert decide(503, date, b"", now).retry_after_s == 120.0
    assert decide(503, {"Retry-After": "120"}, b"", now).retry_after_s == 120.0
