"""The streaming parser behind `POST /api/v1/import`.

The request body is read chunk by chunk and turned into batches of numbered `Line`s:

- text/plain: one URL per line (blank lines and `#` comments skipped), as `frontier import`;
- application/x-ndjson: one JSON object with a "url" string (or a bare JSON string) per line;
- application/json: `{"source": "NAME", "urls": ["...", ...]}`, keys in any order, parsed
  incrementally with ijson, so the `urls` array is never held whole in memory; its "line"
  numbers are 1-based positions in the array. The whole body is read and checked first
  (spooled, to a temporary file when large), so a bad one writes nothing (`JsonBody`).

The batches go through the one import pipeline, `frontier.imports.submit_lines`, the
CLI's too: normalised in a thread while earlier batches are in the database.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import ijson

from frontier.api.errors import BadBody, FieldInvalid, RequestTooLarge
from frontier.api.json_body import MAX_JSON_DEPTH, too_deep
from frontier.imports import (
    BATCH_SIZE,
    MAX_LINE_BYTES,
    ImportFormat,
    Line,
    NestedTooDeeply,
    read_lines,
)

JSON_TYPES = ("application/json",)
NDJSON_TYPES = (
    "application/x-ndjson",
    "application/ndjson",
    "application/jsonl",
    "application/x-jsonlines",
)
TEXT_TYPES = ("text/plain", "application/octet-stream", "")
SPOOL_MEMORY_BYTES = 8 * 1024 * 1024  # a JSON body larger than this is spooled to disk


class LimitedBody:
    """The request body as chunks, refusing to read past `limit` bytes (413)."""

    def __init__(self, chunks: AsyncIterator[bytes], limit: int) -> None:
        self._chunks = chunks
        self.limit = limit
        self.read = 0

    async def chunks(self) -> AsyncIterator[bytes]:
        async for chunk in self._chunks:
            if not chunk:
                continue
            self.read += len(chunk)
            if self.read > self.limit:
                raise RequestTooLarge(
                    f"request body over {self.limit} bytes (FRONTIER_API_IMPORT_MAX_BYTES)"
                )
            yield chunk


class _PushParser:
    """ijson's push parser (the yajl2_c backend, no prefixes: their cost grows with the
    nesting depth, squared over a document) fed one chunk at a time in a thread, so a huge
    string or a deep document never holds the event loop."""

    def __init__(self) -> None:
        self.events = ijson.sendable_list()
        self._coro = ijson.basic_parse_coro(self.events, use_float=True)

    def feed(self, chunk: bytes, copy: Any = None) -> list[tuple[str, Any]]:
        """The events of `chunk`, which is also written to `copy` (a file) if given."""
        if copy is not None:
            copy.write(chunk)
        self._coro.send(chunk)
        return self._take()

    def close(self) -> list[tuple[str, Any]]:
        self._coro.close()  # raises IncompleteJSONError for a truncated document
        return self._take()

    def _take(self) -> list[tuple[str, Any]]:
        out = list(self.events)
        del self.events[:]
        return out


class _LongValueGuard:
    """Refuses a JSON body with more than `limit` bytes between two quotes: a string (or a
    run of anything else) that long is no URL, and yajl would buffer it whole. Two
    `bytes.find` calls per chunk; escaped quotes count as quotes, so an escaped-quote string
    slips through, bounded by the body cap."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.since_quote = 0

    def check(self, chunk: bytes) -> None:
        first = chunk.find(b'"')
        run = self.since_quote + (len(chunk) if first < 0 else first)
        if first >= 0:
            self.since_quote = len(chunk) - chunk.rfind(b'"') - 1
            if len(chunk) > self.limit:  # a run wholly inside one large chunk
                run = max(run, max(map(len, chunk.split(b'"'))))
        else:
            self.since_quote = run
        if run > self.limit:
            raise BadBody(f"a JSON value longer than {self.limit} bytes")


async def raw_line_batches(
    body: LimitedBody, batch_size: int = BATCH_SIZE
) -> AsyncIterator[list[bytes]]:
    """Split the body into lines, about `batch_size` at a time. A line longer than
    MAX_LINE_BYTES is cut to MAX_LINE_BYTES + 1 bytes (so `read_lines` rejects it) and the
    rest of it is skipped, never held."""
    batch: list[bytes] = []
    partial = b""
    skipping = False  # inside an over-long line whose head was already emitted
    async for chunk in body.chunks():
        if skipping:
            cut = chunk.find(b"\n")
            if cut < 0:
                continue
            chunk, skipping = chunk[cut + 1 :], False
        pieces = chunk.split(b"\n")
        pieces[0] = partial + pieces[0]
        partial = pieces.pop()
        batch.extend(pieces)
        if len(partial) > MAX_LINE_BYTES:
            batch.append(partial[: MAX_LINE_BYTES + 1])
            partial, skipping = b"", True
        if len(batch) >= batch_size:
            yield batch
            batch = []
    if partial:
        batch.append(partial)
    if batch:
        yield batch


@dataclass(slots=True)
class JsonBody:
    """Reader of `{"source": ..., "urls": [...]}`, keys in any order, in two passes: the
    first reads the body into a spool (in memory up to SPOOL_MEMORY_BYTES, then a temporary
    file; the body cap bounds it) and checks all of it: JSON syntax, the shape, the
    source's name; the second yields the URLs in batches. So a body refused for any of
    those reasons writes nothing."""

    body: LimitedBody
    source: str | None = None
    saw_urls: bool = False
    _position: int = 0  # items of "urls" so far
    _depth: int = 0
    _key: str | None = None
    _spool: Any = None  # the body, once the first pass has read it

    async def check(self) -> None:
        """The first pass: read and check the whole body (BadBody, FieldInvalid)."""
        spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY_BYTES)  # noqa: SIM115
        try:
            async for _lines in self._parse(self.body.chunks(), spool):
                pass
        except BaseException:
            spool.close()
            raise
        if not self.saw_urls:
            spool.close()
            raise FieldInvalid.of("urls", "required: an array of URL strings")
        self._spool = spool

    async def batches(self, batch_size: int = BATCH_SIZE) -> AsyncIterator[list[Line]]:
        """The second pass: the URLs of the checked body, `batch_size` at a time."""
        if self._spool is None:
            await self.check()
        spool, self._spool = self._spool, None
        try:
            spool.seek(0)
            batch: list[Line] = []
            async for lines in self._parse(_chunks_of(spool), None):
                batch.extend(lines)
                if len(batch) >= batch_size:
                    yield batch
                    batch = []
            if batch:
                yield batch
        finally:
            spool.close()

    async def _parse(self, chunks: AsyncIterator[bytes], spool: Any) -> AsyncIterator[list[Line]]:
        """The `urls` items of the body's chunks, a chunk's worth at a time (each chunk
        also written to `spool`, when given)."""
        self._position = 0
        self._depth = 0
        self._key = None
        parser, guard = _PushParser(), _LongValueGuard(MAX_LINE_BYTES)
        started = False
        try:
            async for chunk in chunks:
                started = started or bool(chunk.strip())
                lines = [
                    line
                    for event, value in await asyncio.to_thread(parser.feed, chunk, spool)
                    if (line := self._event(event, value)) is not None
                ]
                guard.check(chunk)  # before the next chunk grows a long value further
                yield lines
            if not started:
                raise BadBody('empty body: send {"urls": [...]}')
            yield [
                line
                for event, value in await asyncio.to_thread(parser.close)
                if (line := self._event(event, value)) is not None
            ]
        except (ijson.JSONError, ValueError) as exc:  # ijson reports bad UTF-8 as ValueError
            raise BadBody(f"invalid JSON after {self._position} URLs: {exc}") from None

    def _event(self, event: str, value: Any) -> Line | None:
        """One parser event; the Line of a `urls` item, if it is one. Depth 1 is the
        top-level object, depth 2 the `urls` array."""
        if event in ("start_map", "start_array"):
            self._depth += 1
            if self._depth > MAX_JSON_DEPTH:
                raise too_deep()
            if self._depth == 1:
                if event != "start_map":
                    raise BadBody('the JSON body must be an object: {"urls": [...]}')
            elif self._depth == 2:
                self._top_level_value(event, None)
            elif self._depth == 3 and self._key == "urls":
                return self._item(event, None)
            return None
        if event in ("end_map", "end_array"):
            self._depth -= 1
            return None
        if event == "map_key":
            if self._depth == 1:
                self._key = value
            return None
        if self._depth == 0:
            raise BadBody('the JSON body must be an object: {"urls": [...]}')
        if self._depth == 1:
            self._top_level_value(event, value)
            return None
        if self._depth == 2 and self._key == "urls":
            return self._item(event, value)
        return None

    def _top_level_value(self, event: str, value: Any) -> None:
        if self._key == "source":
            if event != "string":
                raise FieldInvalid.of("source", "must be a string (a source name)")
            self.source = value
        elif self._key == "urls":
            if event != "start_array":
                raise FieldInvalid.of("urls", "must be an array of URL strings")
            self.saw_urls = True

    def _item(self, event: str, value: Any) -> Line:
        self._position += 1
        if event == "string":
            return Line(self._position, value)
        return Line(self._position, None, "not a string")


async def _chunks_of(spool: Any, size: int = 1 << 16) -> AsyncIterator[bytes]:
    """The spooled body again, read in a thread (it may be on disk)."""
    while chunk := await asyncio.to_thread(spool.read, size):
        yield chunk


async def text_batches(
    body: LimitedBody, fmt: ImportFormat, batch_size: int = BATCH_SIZE
) -> AsyncIterator[list[Line]]:
    """Numbered lines of a text or NDJSON body; decoding runs in a thread."""
    offset = 0
    async for raw in raw_line_batches(body, batch_size):
        lines = await asyncio.to_thread(_numbered, raw, fmt, offset)
        offset += len(raw)
        yield lines


def _numbered(raw: list[bytes], fmt: ImportFormat, offset: int) -> list[Line]:
    try:
        return [Line(line.number + offset, line.url, line.error) for line in read_lines(raw, fmt)]
    except NestedTooDeeply as exc:  # hostile, not a typo: the body is refused
        raise BadBody(f"line {exc.number + offset}: JSON nested too deeply") from None
