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
from frontier.imports import (
    BATCH_SIZE,
    MAX_LINE_BYTES,
    ImportFormat,
    ImportSummary,
    Line,
    LineBatch,
    prepare_lines,
    read_lines,
)
from frontier.queue import QueueRepository, SourceRef

JSON_TYPES = ("application/json",)
NDJSON_TYPES = ("application/x-ndjson", "application/ndjson", "application/jsonl",
                "application/x-jsonlines")  # fmt: skip
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
                raise RequestTooLarge(f"request body over {self.limit} bytes "
                                   "(FRONTIER_API_IMPORT_MAX_BYTES)")  # fmt: skip
            yield chunk


class _AsyncReader:
    """The `await read(n)` file interface ijson's async parser expects, over a body."""

    def __init__(self, body: LimitedBody) -> None:
        self._chunks = body.chunks()
        self._pending = b""

    async def read(self, size: int = 65_536) -> bytes:
        if not self._pending:
            self._pending = await anext(self._chunks, b"")
        out, self._pending = self._pending[:size], self._pending[size:]
        return out


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

    async def batches(self, batch_size: int = BATCH_SIZE) -> AsyncIterator[list[Line]]:
        batch: list[Line] = []
        position = 0
        nested = 0  # depth inside a non-string item of "urls"
        top_level_seen = False
        events = ijson.parse_async(_AsyncReader(self.body), use_float=True)
        try:
            async for prefix, event, value in events:
                if not top_level_seen:
                    top_level_seen = True
                    if event != "start_map":
                        raise BadBody('the JSON body must be an object: {"urls": [...]}')
                if nested:
                    if event in ("start_map", "start_array"):
                        nested += 1
                    elif event in ("end_map", "end_array"):
                        nested -= 1
                    continue
                if prefix == "source" and event not in ("map_key",):
                    if event != "string":
                        raise FieldInvalid.of("source", "must be a string (a source name)")
                    if self.saw_urls:
                        self.source_after_urls = value
                    else:
                        self.source = value
                elif prefix == "urls" and event == "start_array":
                    self.saw_urls = True
                elif prefix == "urls" and event not in ("end_array", "map_key"):
                    raise FieldInvalid.of("urls", "must be an array of URL strings")
                elif prefix == "urls.item":
                    if event == "end_array" or event == "end_map":
                        continue
                    position += 1
                    if event == "string":
                        batch.append(Line(position, value))
                    else:
                        batch.append(Line(position, None, "not a string"))
                        if event in ("start_map", "start_array"):
                            nested = 1
                    if len(batch) >= batch_size:
                        yield batch
                        batch = []
        except (ijson.JSONError, ValueError) as exc:  # ijson reports bad UTF-8 as ValueError
            raise BadBody(f"invalid JSON after {position} URLs: {exc}") from None
        if not top_level_seen:
            raise BadBody('empty body: send {"urls": [...]}')
        if not self.saw_urls:
            raise FieldInvalid.of("urls", "required: an array of URL strings")
        if batch:
            yield batch


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
    return [Line(line.number + offset, line.url, line.error) for line in read_lines(raw, fmt)]


async def submit_batches(
    queue: QueueRepository,
    batches: AsyncIterator[list[Line]],
    resolve_source: Callable[[], Awaitable[SourceRef]],
    summary: ImportSummary,
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
            in_flight = asyncio.create_task(queue.submit_prepared(batch.prepared))
            previous = batch
        if source is None:
            await resolve_source()  # an empty body still names a source that must exist
    finally:
        if in_flight is not None and previous is not None:
            with contextlib.suppress(asyncio.CancelledError):
                summary.add(previous, await in_flight)
    summary.errors.sort(key=lambda error: error["line"])
    return summary
