"""Bulk import of URLs from text, CSV or NDJSON, streamed in batches.

Each line gets a verdict: accepted (new), duplicate (known already, or repeated), or
rejected with a reason. Parsing and normalising the next batch runs in a thread while the
database ingests the previous one, so the two overlap.
"""

from __future__ import annotations

import asyncio
import csv
import json
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import islice
from typing import Any

from frontier.errors import FrontierError
from frontier.queue import QueueRepository
from frontier.queue_values import SourceRef, SubmitResult
from frontier.states import Origin
from frontier.submit_rows import PreparedBatch, prepare_urls

BATCH_SIZE = 5_000
# Batches in the database at once; their locks are taken in key order. A batch would wait
# for the transaction of one before it that inserted the same URL: such lines are left out
# before it is sent (`PreparedBatch.leave_out`), so the batches run side by side.
PARALLEL_BATCHES = 3
# How often a running import folds its batches' host summaries into host_state (queue.sql
# `fold_host_deltas`), making their URLs claimable. A fold writes each host the import
# touched since the last one: on an import spread over many hosts, folding every few
# seconds took a large share of its time, and folding only at the end made it faster
# (bench.submit; bench/RESULTS.md). Half a minute is also how often a running fetcher folds what
# waits (its maintenance tick), so URLs wait no longer for an import's fold than for a
# fetcher's. It folds at its end too, so an import that returned has every URL claimable.
FOLD_EVERY_S = 30.0
MAX_LINE_BYTES = 65_536  # a longer line is rejected, never held whole
MAX_REPORTED_ERRORS = 1_000


class ImportFormat(StrEnum):
    TXT = "txt"  # one URL per line; blank lines and lines starting with '#' are skipped
    CSV = "csv"  # a header row naming a `url` column, or URLs in the first column
    NDJSON = "ndjson"  # one JSON object with a "url" string (or a bare JSON string) per line


class UnusableInput(FrontierError):
    """The input as a whole cannot be imported (no url column, unreadable file)."""


class NestedTooDeeply(UnusableInput):
    """An NDJSON line nested past the JSON parser's recursion limit: refused as a whole."""

    def __init__(self, number: int) -> None:
        super().__init__(f"line {number}: JSON nested too deeply")
        self.number = number


def detect_format(name: str) -> ImportFormat:
    lowered = name.lower()
    if lowered.endswith(".csv"):
        return ImportFormat.CSV
    if lowered.endswith((".ndjson", ".jsonl")):
        return ImportFormat.NDJSON
    return ImportFormat.TXT


@dataclass(frozen=True, slots=True)
class Line:
    number: int
    url: str | None  # None: the line was refused before normalisation
    error: str | None = None


def read_lines(stream: Iterable[bytes], fmt: ImportFormat) -> Iterator[Line]:
    """Turn raw lines into numbered URLs (or per-line errors); skips blanks and comments."""
    url_column: int | None = None if fmt is ImportFormat.CSV else 0
    for number, raw in enumerate(stream, start=1):
        if len(raw) > MAX_LINE_BYTES:
            yield Line(number, None, f"line longer than {MAX_LINE_BYTES} bytes")
            continue
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8").strip()
        except UnicodeDecodeError as exc:
            yield Line(number, None, f"not valid UTF-8 (byte {exc.start + 1})")
            continue
        if not text or (fmt is not ImportFormat.NDJSON and text.startswith("#")):
            continue
        if fmt is ImportFormat.TXT:
            yield Line(number, text)
        elif fmt is ImportFormat.NDJSON:
            yield _ndjson_line(number, text)
        else:
            try:
                cells = next(csv.reader([text]), [])
            except csv.Error as exc:  # e.g. a bare carriage return inside an unquoted field
                yield Line(number, None, f"unreadable CSV row: {exc}")
                continue
            if url_column is None:
                url_column = _csv_url_column(cells)
                if cells[url_column].strip().lower() == "url":
                    continue  # the header row
            if url_column >= len(cells):
                yield Line(number, None, f"no column {url_column + 1} on this row")
            else:
                yield Line(number, cells[url_column].strip())


def _csv_url_column(header: list[str]) -> int:
    names = [cell.strip().lower() for cell in header]
    if "url" in names:
        return names.index("url")
    if names and "://" in names[0]:
        return 0
    raise UnusableInput("CSV input needs a header row with a 'url' column")


def _ndjson_line(number: int, text: str) -> Line:
    try:
        value: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        return Line(number, None, f"invalid JSON: {exc.msg} at column {exc.colno}")
    except RecursionError:  # a line of thousands of '[': hostile, not a typo
        raise NestedTooDeeply(number) from None
    if isinstance(value, dict):
        value = value.get("url")
        if value is None:
            return Line(number, None, 'no "url" field')
    if not isinstance(value, str):
        return Line(number, None, '"url" is not a string')
    return Line(number, value)


@dataclass(slots=True)
class ImportSummary:
    """What a URL import did: counts per verdict and the first rejections by line."""

    lines: int = 0
    accepted: int = 0
    duplicate: int = 0
    rejected: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)  # the first 1000 rejections
    requeued: int = 0  # known failed or dead URLs revived (an import with `requeue`)
    requeue: bool = False  # asked to requeue: the answer says how many were

    def reject(self, line: int, reason: str) -> None:
        self.rejected += 1
        if len(self.errors) < MAX_REPORTED_ERRORS:
            self.errors.append({"line": line, "reason": reason})

    def add(self, batch: LineBatch, result: SubmitResult) -> None:
        """Count a submitted batch: its new, known and rejected lines."""
        self.lines += batch.size
        self.accepted += result.inserted
        self.duplicate += result.known + result.raised
        self.requeued += result.requeued
        for rejection in result.rejected:
            self.reject(batch.numbers[rejection.index], rejection.reason)

    def as_json(self) -> dict[str, Any]:
        return {
            "accepted": self.accepted,
            "duplicate": self.duplicate,
            "rejected": self.rejected,
            **({"requeued": self.requeued} if self.requeue else {}),
            "errors": self.errors,
        }


@dataclass(slots=True)
class LineBatch:
    """One batch of lines, normalised and ready for one submit statement."""

    prepared: PreparedBatch
    numbers: list[int]  # line number of each candidate
    size: int  # lines consumed, refused ones included


def prepare_lines(
    lines: Sequence[Line], source: SourceRef, delay_ms: int, summary: ImportSummary
) -> LineBatch:
    """Normalise lines as URLs of origin `manual`; lines refused before normalisation are
    counted in `summary`. Pure CPU work, run in a thread."""
    urls, numbers = [], []
    for line in lines:
        if line.url is None:
            summary.reject(line.number, line.error or "unreadable line")
        else:
            urls.append(line.url)
            numbers.append(line.number)
    return LineBatch(prepare_urls(urls, source, Origin.MANUAL, delay_ms), numbers, len(lines))


async def import_lines(
    queue: QueueRepository,
    lines: Iterator[Line],
    source: SourceRef,
    *,
    batch_size: int = BATCH_SIZE,
    parallel: int = PARALLEL_BATCHES,
    on_progress: Callable[[int], None] | None = None,
    requeue: bool = False,
) -> ImportSummary:
    """Submit `lines` (read in a thread, `batch_size` at a time) with origin `manual`
    through `submit_lines`; returns the per-line verdicts. With `requeue`, known failed and
    dead URLs among them are requeued (counted apart)."""

    async def batches() -> AsyncIterator[list[Line]]:
        while chunk := await asyncio.to_thread(lambda: list(islice(lines, batch_size))):
            yield chunk

    return await submit_lines(
        queue,
        batches(),
        source,
        ImportSummary(requeue=requeue),
        parallel=parallel,
        on_progress=on_progress,
        requeue=requeue,
    )


async def submit_lines(
    queue: QueueRepository,
    batches: AsyncIterator[Sequence[Line]],
    source: SourceRef | Callable[[], Awaitable[SourceRef]],
    summary: ImportSummary,
    *,
    parallel: int = PARALLEL_BATCHES,
    on_progress: Callable[[int], None] | None = None,
    requeue: bool = False,
) -> ImportSummary:
    """The one import pipeline, behind `frontier urls import` and `POST /api/v1/import`:
    submit each batch of `batches` with origin `manual`, counting its verdicts in
    `summary`. Each batch is normalised in a thread while up to `parallel` batches are in
    the database (lines a batch in flight holds are left out of the next one:
    `PreparedBatch.leave_out`). The host summaries are folded every `FOLD_EVERY_S` and at
    the end, so an import that returned has every URL claimable. `source` may be a
    function, called once before the first batch (a JSON body names its source first) and
    for an empty import too (the source must exist). On an error (or cancellation), the
    batches already sent end first, each committed or rolled back whole; those committed
    stay imported and counted in `summary`, their host summaries left to the next fold (a
    fetcher's maintenance tick takes them), and the error reaches the caller."""
    delay = queue.policy.default_delay_ms
    resolved = source if isinstance(source, SourceRef) else None
    in_flight: deque[tuple[LineBatch, asyncio.Task[SubmitResult]]] = deque()

    async def source_ref() -> SourceRef:
        nonlocal resolved
        if resolved is None:
            assert not isinstance(source, SourceRef)
            resolved = await source()
        return resolved

    def prepared(lines: Sequence[Line], ref: SourceRef, sent: list[Any]) -> LineBatch:
        batch = prepare_lines(lines, ref, delay, summary)
        batch.prepared.leave_out(sent)
        return batch

    async def settle(keep: int) -> None:
        """Count the oldest batches in flight until at most `keep` are."""
        while len(in_flight) > keep:
            done, task = in_flight.popleft()
            summary.add(done, await task)
            if on_progress:
                on_progress(summary.lines)

    folded = time.monotonic()
    try:
        async for lines in batches:
            ref = await source_ref()
            sent = [done.prepared.rows for done, _ in in_flight]
            batch = await asyncio.to_thread(prepared, lines, ref, sent)
            await settle(parallel - 1)
            if time.monotonic() - folded >= FOLD_EVERY_S:
                await queue.fold_host_deltas(at_once=True)
                folded = time.monotonic()
            task = asyncio.create_task(
                queue.submit_prepared(batch.prepared, requeue=requeue, fold=False)
            )
            in_flight.append((batch, task))
        await source_ref()
        await settle(0)
    except BaseException as exc:
        if isinstance(exc, asyncio.CancelledError):
            for _, task in in_flight:
                task.cancel()
        results = await asyncio.gather(*(task for _, task in in_flight), return_exceptions=True)
        for (done, _), result in zip(in_flight, results, strict=True):
            if not isinstance(result, BaseException):
                summary.add(done, result)
        summary.errors.sort(key=lambda error: error["line"])
        raise
    await queue.fold_host_deltas(at_once=True)
    summary.errors.sort(key=lambda error: error["line"])
    return summary
