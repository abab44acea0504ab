"""One HTTP exchange as WARC/1.1 records, each its own gzip member (pure: no I/O).

The body the client keeps is the payload as read: aiohttp has taken the transfer and
content codings off (chunking, `Content-Encoding: gzip/br/...`), and the raw bytes are not
kept. As warcio does for a decoded body, the record says so: the headers that described
the encoded form are renamed `X-Archive-Orig-*` (pywb's convention, which replay tools
read) and `Content-Length` is the length of the payload stored, so that the record's HTTP
block is a message a reader can parse as it is.

A `revisit` record holds only the HTTP headers, per the WARC 1.1 profiles:

- `server-not-modified`: the server answered 304;
- `identical-payload-digest`: this payload was archived before (`Original`), named by
  `WARC-Refers-To`, `WARC-Refers-To-Target-URI` and `WARC-Refers-To-Date`, and the
  payload digest is the original's.
"""

from __future__ import annotations

import base64
import hashlib
import io
import uuid
import zlib
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from fastwarc.warc import WarcRecord, WarcRecordType

from frontier.safe_http.responses import Exchange

SERVER_NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
IDENTICAL_PAYLOAD = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
GZIP_LEVEL = 6  # zlib's default: level 9 costs twice the CPU for a few percent of disk
RENDERED_TYPE = "text/html; charset=utf-8"  # a conversion record's rendered DOM
# Headers that described the bytes on the wire, not the payload stored.
WIRE_HEADERS = frozenset({"content-encoding", "transfer-encoding", "content-length"})


@dataclass(frozen=True, slots=True)
class Original:
    """A response record archived before with the same payload."""

    record_id: str  # "<urn:uuid:...>"
    target_uri: str
    date: str  # its WARC-Date


@dataclass(frozen=True, slots=True)
class Built:
    """One record, ready to append: its gzip member and what a pointer needs."""

    member: bytes
    record_id: str
    kind: str  # response, revisit, request, warcinfo
    target_uri: str
    date: str
    payload_digest: str | None = None  # "sha1:BASE32" of a response's payload


def payload_digest(body: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()


def warc_date(moment: datetime) -> str:
    """WARC 1.1's date: UTC, microseconds kept."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_record_id() -> str:
    return f"<{uuid.uuid4().urn}>"


def exchange_records(
    exchange: Exchange, *, original: Original | None = None
) -> tuple[Built, Built]:
    """The response record of `exchange` (a `revisit` for a 304, or with `original`, whose
    payload is this one's) and its request record, concurrent to it."""
    date = warc_date(exchange.started)
    digest = payload_digest(exchange.body)
    head = _response_head(exchange)
    # No WARC-IP-Address: aiohttp gives the connection back (and with it the peer's
    # address) as soon as a short body is read.
    extra = {"WARC-Payload-Digest": digest}
    if exchange.truncated:
        extra["WARC-Truncated"] = "length"
    if exchange.status == 304:
        kind, block = "revisit", head
        extra["WARC-Profile"] = SERVER_NOT_MODIFIED
        del extra["WARC-Payload-Digest"]  # a 304 has no payload
    elif original is not None:
        kind, block = "revisit", head
        extra |= {
            "WARC-Profile": IDENTICAL_PAYLOAD,
            "WARC-Refers-To": original.record_id,
            "WARC-Refers-To-Target-URI": original.target_uri,
            "WARC-Refers-To-Date": original.date,
        }
    else:
        kind, block = "response", head + exchange.body
    response_id = new_record_id()
    response = _member(
        kind, response_id, exchange.url, date, block, "application/http; msgtype=response", extra
    )
    request_id = new_record_id()
    request = _member(
        "request",
        request_id,
        exchange.url,
        date,
        _request_head(exchange),
        "application/http; msgtype=request",
        {"WARC-Concurrent-To": response_id},
    )
    stored_digest = digest if kind == "response" else None
    return (
        Built(response, response_id, kind, exchange.url, date, stored_digest),
        Built(request, request_id, "request", exchange.url, date),
    )


def conversion_record(response: Built, html: bytes, moment: datetime) -> Built:
    """A rendered page's DOM (fetcher.render_step), serialized as HTML: a `conversion`
    record (WARC 1.1, 6.7: "an alternative version of another record's content that was
    created as the result of an archival process") of its response record, which
    `WARC-Refers-To` names. The requests the page's scripts made are archived before it
    as exchanges of their own."""
    record_id = new_record_id()
    date = warc_date(moment)
    member = _member(
        "conversion",
        record_id,
        response.target_uri,
        date,
        html,
        RENDERED_TYPE,
        {"WARC-Refers-To": response.record_id, "WARC-Payload-Digest": payload_digest(html)},
    )
    return Built(member, record_id, "conversion", response.target_uri, date)


def warcinfo(filename: str, moment: datetime, software: str) -> Built:
    """The first record of each file: what wrote it."""
    fields = f"software: {software}\r\nformat: WARC File Format 1.1\r\nrobots: obey\r\n"
    record_id = new_record_id()
    date = warc_date(moment)
    member = _member(
        "warcinfo",
        record_id,
        None,
        date,
        fields.encode(),
        "application/warc-fields",
        {"WARC-Filename": filename},
    )
    return Built(member, record_id, "warcinfo", "", date)


def _response_head(exchange: Exchange) -> bytes:
    lines = [f"HTTP/{exchange.version} {exchange.status} {exchange.reason}".rstrip()]
    for name, value in exchange.headers:
        lower = name.lower()
        if lower in WIRE_HEADERS:
            if lower == "content-encoding" and value.strip().lower() in ("", "identity"):
                continue
            if lower == "content-length" and value.strip() == str(len(exchange.body)):
                continue  # the payload as sent: the Content-Length below says the same
            lines.append(f"X-Archive-Orig-{name}: {value}")
        else:
            lines.append(f"{name}: {value}")
    if exchange.status != 304:
        lines.append(f"Content-Length: {len(exchange.body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")


def _request_head(exchange: Exchange) -> bytes:
    parts = urlsplit(exchange.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    lines = [f"GET {target} HTTP/{exchange.version}"]
    lines += [f"{name}: {value}" for name, value in exchange.request_headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")


def _member(
    kind: str,
    record_id: str,
    target_uri: str | None,
    date: str,
    block: bytes,
    content_type: str,
    extra: dict[str, str],
) -> bytes:
    record = WarcRecord()
    # FastWARC takes the id without its brackets and "urn:" prefix.
    record.init_headers(record_type=_TYPES[kind], record_urn=record_id[5:-1].encode())
    headers = record.headers
    headers["WARC-Date"] = date
    if target_uri is not None:
        headers["WARC-Target-URI"] = target_uri
    headers["Content-Type"] = content_type
    headers["WARC-Block-Digest"] = payload_digest(block)
    for name, value in extra.items():
        headers[name] = value
    record.set_bytes_content(block)
    # One gzip member per record, made in memory and appended as one piece. zlib rather
    # than FastWARC's GzipWriter: a GzipWriter per record costs more to set up than the
    # whole record of a news page (bench/warc_writer.py, bench/RESULTS.md).
    sink = io.BytesIO()  # FastWARC writes a header line at a time: a C buffer, not Python
    record.write(sink, checksum_data=False)
    return zlib.compress(sink.getvalue(), GZIP_LEVEL, wbits=zlib.MAX_WBITS | 16)


_TYPES = {
    "response": WarcRecordType.response,
    "revisit": WarcRecordType.revisit,
    "request": WarcRecordType.request,
    "warcinfo": WarcRecordType.warcinfo,
    "conversion": WarcRecordType.conversion,
}
