"""`ArchiveWriter`: WARC records built and appended in a thread of their own.

Building a record is a SHA-1 and a gzip of the page (about 0.5 ms for 50 KB,
bench/warc_writer.py) and appending it a write: neither runs on the event loop, which
serves the fetches. One thread, so that the records of each call are appended in order and
the files are never written by two threads at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from frontier.archive.files import Location, WarcFiles
from frontier.archive.records import Built, Original, conversion_record, exchange_records
from frontier.safe_http.responses import Exchange


@dataclass(frozen=True, slots=True)
class Archived:
    """An exchange's response (or revisit, or a rendered page's conversion) record,
    written: what a pointer holds."""

    record: Built
    location: Location

    def original(self) -> Original:
        """As the original of a later revisit."""
        return Original(self.record.record_id, self.record.target_uri, self.record.date)


class ArchiveWriter:
    def __init__(self, directory: Path, prefix: str, rotate_bytes: int) -> None:
        self.directory = directory
        self.files = WarcFiles(directory, prefix, rotate_bytes)
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="warc-writer")
        self._closed = False

    async def write(
        self,
        exchanges: Sequence[tuple[Exchange, Original | None]],
        conversions: Mapping[int, bytes] | None = None,
    ) -> list[Archived]:
        """Archive the exchanges, in order (each its response, or revisit, and request
        records); returns each one's response record and where it lies. `conversions`:
        the rendered DOM of the exchange at an index (fetcher.render_step), archived after
        it as a `conversion` record of its response, which is then what is returned for
        that index (a rendered document points at the text it was extracted from). Raises
        ArchiveWriteFailed when the disk refuses: then none of them is archived."""
        if not exchanges:
            return []
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._thread, self._write, list(exchanges), dict(conversions or {})
        )

    def _write(
        self, exchanges: list[tuple[Exchange, Original | None]], conversions: dict[int, bytes]
    ) -> list[Archived]:
        records: list[Built] = []
        answers: list[int] = []  # the index in `records` of what each exchange returns
        for index, (exchange, original) in enumerate(exchanges):
            response, request = exchange_records(exchange, original=original)
            answers.append(len(records))
            records += (response, request)
            dom = conversions.get(index)
            if dom is not None:
                answers[-1] = len(records)
                records.append(conversion_record(response, dom, exchange.started))
        locations = self.files.append(records)
        return [Archived(records[i], locations[i]) for i in answers]

    async def close(self) -> None:
        """Seal the open file (synced and renamed complete); closing again does nothing."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._thread, self.files.close)
        finally:
            self._thread.shutdown(wait=True)
