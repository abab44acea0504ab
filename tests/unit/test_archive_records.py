"""The archive's records as pure functions: a decoded body's HTTP block says so
(`X-Archive-Orig-*`), a 304 and an identical payload are revisits of their profiles, a
body cut at the cap is marked truncated."""

from __future__ import annotations

import zlib
from datetime import UTC, datetime

from frontier.archive.reader import parse_record
from frontier.archive.records import (
    IDENTICAL_PAYLOAD,
    SERVER_NOT_MODIFIED,
    Original,
    exchange_records,
    payload_digest,
)
from frontier.safe_http.responses import Exchange

BODY = b"<html><p>the page</p></html>"


def exchange(
    status: int = 200, headers: tuple[tuple[str, str], ...] = (), **values: object
) -> Exchange:
    fields: dict[str, object] = {
        "url": "https://news.example/a?b=1",
        "started": datetime(2026, 11, 27, 12, 0, 0, 123456, tzinfo=UTC),
        "request_headers": (("Host", "news.example"), ("Accept-Encoding", "gzip")),
        "version": "1.1",
        "status": status,
        "reason": "OK",
        "headers": headers,
        "body": BODY if status != 304 else b"",
    }
    fields.update(values)
    return Exchange(**fields)  # type: ignore[arg-type]


def unpacked(member: bytes) -> tuple[dict[str, str], int | None, dict[str, str], bytes]:
    record = parse_record(zlib.decompress(member, zlib.MAX_WBITS | 16))
    return record.headers, record.http_status, dict(record.http_headers), record.payload


def test_a_decoded_body_renames_the_headers_of_its_coding() -> None:
    response, request = exchange_records(
        exchange(
            headers=(
                ("Content-Type", "text/html"),
                ("Content-Encoding", "gzip"),
                ("Transfer-Encoding", "chunked"),
                ("Content-Length", "17"),
            )
        )
    )
    headers, status, http, payload = unpacked(response.member)
    assert (headers["WARC-Type"], status, payload) == ("response", 200, BODY)
    assert headers["WARC-Date"] == "2026-11-27T12:00:00.123456Z"
    assert headers["WARC-Payload-Digest"] == payload_digest(BODY) == response.payload_digest
    assert http["X-Archive-Orig-Content-Encoding"] == "gzip"
    assert http["X-Archive-Orig-Transfer-Encoding"] == "chunked"
    assert http["X-Archive-Orig-Content-Length"] == "17"
    assert http["Content-Length"] == str(len(BODY))
    assert "Content-Encoding" not in http and "Transfer-Encoding" not in http
    request_headers, _, sent, _ = unpacked(request.member)
    assert request_headers["WARC-Concurrent-To"] == response.record_id
    assert sent == {"Host": "news.example", "Accept-Encoding": "gzip"}
    raw = zlib.decompress(request.member, zlib.MAX_WBITS | 16)
    assert b"\r\n\r\nGET /a?b=1 HTTP/1.1\r\nHost: news.example\r\n" in raw


def test_a_body_as_sent_keeps_its_headers() -> None:
    response, _ = exchange_records(
        exchange(headers=(("Content-Length", str(len(BODY))), ("Content-Encoding", "identity")))
    )
    _, _, http, _ = unpacked(response.member)
    assert http == {"Content-Length": str(len(BODY))}


def test_a_304_is_a_server_not_modified_revisit_without_a_payload() -> None:
    response, _ = exchange_records(exchange(304, (("ETag", '"v1"'),), reason="Not Modified"))
    headers, status, http, payload = unpacked(response.member)
    assert (headers["WARC-Type"], headers["WARC-Profile"]) == ("revisit", SERVER_NOT_MODIFIED)
    assert (status, payload, response.payload_digest) == (304, b"", None)
    assert "WARC-Payload-Digest" not in headers and http == {"ETag": '"v1"'}


def test_an_identical_payload_is_a_revisit_that_refers_to_the_original() -> None:
    first, _ = exchange_records(exchange())
    original = Original(first.record_id, first.target_uri, first.date)
    again, _ = exchange_records(exchange(url="https://news.example/copy"), original=original)
    headers, status, _, payload = unpacked(again.member)
    assert (headers["WARC-Type"], headers["WARC-Profile"]) == ("revisit", IDENTICAL_PAYLOAD)
    assert headers["WARC-Refers-To"] == first.record_id
    assert headers["WARC-Refers-To-Target-URI"] == "https://news.example/a?b=1"
    assert headers["WARC-Refers-To-Date"] == first.date
    assert headers["WARC-Payload-Digest"] == first.payload_digest
    assert (status, payload, again.payload_digest) == (200, b"", None)


def test_a_body_cut_at_the_cap_is_marked_truncated() -> None:
    response, _ = exchange_records(exchange(truncated=True))
    assert unpacked(response.member)[0]["WARC-Truncated"] == "length"
    plain, _ = exchange_records(exchange())
    assert "WARC-Truncated" not in unpacked(plain.member)[0]
