"""The streaming parser behind `POST /api/v1/import`.

The request body is read chunk by chunk and turned into batches of numbered `Line`s:

- text/plain: one URL per line (blank lines and `#` comments skipped), as `frontier import`;
- application/x-ndjson: one JSON object with a "url" string (or a bare JSON string) per line;
- application/json: `{"source": "NAME", "urls": ["...", ...]}`, parsed incrementally with
  ijson, so the `urls` array is never held whole; its "line" numbers are 1-based positions
  in the array. A "source" key must come before "urls" (or be given as `?source=`).

Each batch is normalised in a thread while the database ingests the previous one (the same
pipelining as `frontier.imports.import_lines`). At most two batches are in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import ijson

from frontier.api.errors import BadBody, FieldInvalid, RequestTooLarge
from frontier.api.json_body import MAX_JSON_DEPTH, too_deep
from frontier.imports import (
    BATCH_SIZE,
    MAX_LINE_BYTES,
    ImportFormat,
    ImportSummary,
    Line,
    LineBatch,
    NestedTooDeeply,
    prepare_lines,
    read_lines,
)
from frontier.queue import QueueRepository, SourceRef

JSON_TYPES = ("application/json",)
NDJSON_TYPES = (
    "application/x-ndjson",
    "application/ndjson",
    "application/jsonl",
    "application/x-jsonlines",
)
TEXT_TYPES = ("text/plain", "application/octet-stream", "")


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

    def feed(self, chunk: bytes) -> list[tuple[str, Any]]:
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
    """Incremental reader of `{"source": ..., "urls": [...]}`."""

    body: LimitedBody
    source: str | None = None
    saw_urls: bool = False
    source_after_urls: str | None = None
    _position: int = 0  # items of "urls" so far
    _depth: int = 0
    _key: str | None = None

    async def batches(self, batch_size: int = BATCH_SIZE) -> AsyncIterator[list[Line]]:
        batch: list[Line] = []
        self._position = 0
        self._depth = 0
        self._key: str | None = None  # the current key of the top-level object
        parser, guard = _PushParser(), _LongValueGuard(MAX_LINE_BYTES)
        started = False
        try:
            async for chunk in self.body.chunks():
                started = started or bool(chunk.strip())
                for event, value in await asyncio.to_thread(parser.feed, chunk):
                    line = self._event(event, value)
                    if line is not None:
                        batch.append(line)
                guard.check(chunk)  # before the next chunk grows a long value further
                if len(batch) >= batch_size:
                    yield batch
                    batch = []
            if not started:
                raise BadBody('empty body: send {"urls": [...]}')
            for event, value in await asyncio.to_thread(parser.close):
                line = self._event(event, value)
                if line is not None:
                    batch.append(line)
        except (ijson.JSONError, ValueError) as exc:  # ijson reports bad UTF-8 as ValueError
            raise BadBody(f"invalid JSON after {self._position} URLs: {exc}") from None
        if not self.saw_urls:
            raise FieldInvalid.of("urls", "required: an array of URL strings")
        if batch:
            yield batch

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
            if self.saw_urls:
                self.source_after_urls = value
            else:
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


async def submit_batches(
    queue: QueueRepository,
    batches: AsyncIterator[list[Line]],
    resolve_source: Callable[[], Awaitable[SourceRef]],
    summary: ImportSummary,
    *,
    requeue: bool = False,
) -> ImportSummary:
    """Submit each batch with origin `manual`, preparing the next while one is in flight.
    `resolve_source` runs once, before the first batch (a JSON body names its source first).
    On an error mid-body the batches already sent stay imported and `summary` counts them."""
    delay = queue.policy.default_delay_ms
    source: SourceRef | None = None
    in_flight: asyncio.Task[Any] | None = None
    previous: LineBatch | None = None
    try:
        async for lines in batches:
            if source is None:
                source = await resolve_source()
            batch = await asyncio.to_thread(prepare_lines, lines, source, delay, summary)
            if in_flight is not None and previous is not None:
                summary.add(previous, await in_flight)
            in_flight = asyncio.create_task(queue.submit_prepared(batch.prepared, requeue=requeue))
            previous = batch
        if source is None:
            await resolve_source()  # an empty body still names a source that must exist
    finally:
        if in_flight is not None and previous is not None:
            with contextlib.suppress(asyncio.CancelledError):
                summary.add(previous, await in_flight)
    summary.errors.sort(key=lambda error: error["line"])
    return summary
