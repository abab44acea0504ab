"""Reading one record back by its `Location` (a document's pointer)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path

from frontier.archive.files import OPEN_SUFFIX, Location


@dataclass(frozen=True, slots=True)
class StoredRecord:
    headers: dict[str, str]  # the WARC headers
    http_status: int | None
    http_headers: list[tuple[str, str]]
    payload: bytes

    @property
    def record_id(self) -> str:
        return self.headers["WARC-Record-ID"]


class RecordUnreadable(LookupError):
    """The file is gone (retention) or the bytes at the location are not one record."""


def path_of(directory: Path, file: str) -> Path:
    """The file a location names: complete, or still being written."""
    path = directory / file
    if path.exists():
        return path
    return directory / (file + OPEN_SUFFIX)


def read_record(directory: Path, location: Location) -> StoredRecord:
    path = path_of(directory, location.file)
    try:
        with path.open("rb") as stream:
            stream.seek(location.offset)
            member = stream.read(location.length)
    except OSError as exc:
        raise RecordUnreadable(f"{location.file}: {exc}") from None
    inflate = zlib.decompressobj(zlib.MAX_WBITS | 16)
    try:
        raw = inflate.decompress(member)
    except zlib.error as exc:
        raise RecordUnreadable(f"{location}: not a gzip member ({exc})") from None
    if not inflate.eof or inflate.unused_data:
        raise RecordUnreadable(f"{location}: not exactly one gzip member")
    return parse_record(raw)


def parse_record(raw: bytes) -> StoredRecord:
    """One uncompressed WARC record: its headers, and for an HTTP response its status,
    headers and payload."""
    head, _, block = raw.partition(b"\r\n\r\n")
    lines = head.decode("utf-8", "replace").split("\r\n")
    if not lines or not lines[0].startswith("WARC/"):
        raise RecordUnreadable("no WARC version line")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    block = block[: int(headers.get("Content-Length", len(block)))]
    if not headers.get("Content-Type", "").startswith("application/http"):
        return StoredRecord(headers, None, [], block)
    http_head, _, payload = block.partition(b"\r\n\r\n")
    http_lines = http_head.decode("latin-1").split("\r\n")
    status_parts = http_lines[0].split(" ", 2)
    status = int(status_parts[1]) if len(status_parts) > 1 and status_parts[1].isdigit() else None
    http_headers = [
        (name, value) for name, _, value in (line.partition(": ") for line in http_lines[1:])
    ]
    return StoredRecord(headers, status, http_headers, payload)
