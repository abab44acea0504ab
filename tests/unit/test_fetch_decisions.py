"""The pure response decisions: outcome-table rows, Retry-After, charset decoding."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fetcher.decisions import Action, decide, decode_html, retry_after
from frontier.queue import OutcomeKind

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
        (403, {}, b"", OutcomeKind.RETRY),
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
