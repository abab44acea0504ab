"""The archive step of a batch (frontier.archive, docs/archive.md): every request the
batch's pages made and its answer go into the fetcher's WARC files before the documents
are stored, and each document carries the pointer of its response record.

Called at two points: the pipeline's `store` (`keep(pages)`, once a page's fate is known:
a duplicate or an unchanged revisit is archived as a `revisit` of the payload archived
before), and the robots.txt step (`keep_exchanges`).

A write the disk refuses (full, read-only, gone) does not lose the archive silently: the
error is logged with its errno name, counted (`frontier_archive_errors` on /metrics), and
the pages of the failed write go back to pending (`deferred`, no attempt counted) while
claiming pauses, doubling per failure as for a sink outage (`SinkBackoff`). Fetching goes
on once a write succeeds again; a page is never stored without its record. Switch
archiving off (FRONTIER_ARCHIVE=false) to fetch without it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from fetcher.page import Page
from fetcher.sink_backoff import SinkBackoff
from frontier.archive.files import ArchiveWriteFailed
from frontier.archive.payloads import ArchivedPayloads
from frontier.archive.records import Original, payload_digest
from frontier.archive.upkeep import Retention, upkeep
from frontier.archive.writer import Archived, ArchiveWriter
from frontier.clock import utcnow
from frontier.db import Database
from frontier.queue_values import OutcomeKind
from frontier.safe_http.responses import Exchange

log = logging.getLogger(__name__)

SAVE_EVERY = 500  # originals kept in memory before they are written to warc_payloads
# Pages that end without a document of their own, whose payload may be archived already.
_REVISITS = (OutcomeKind.DUPLICATE_CONTENT, OutcomeKind.NOT_MODIFIED)


@dataclass(frozen=True, slots=True)
class Unarchived:
    """The pages of a write the disk refused: they wait `wait_s`, then are fetched again."""

    pages: list[Page]
    wait_s: float
    error: str


class ArchiveStep:
    def __init__(
        self,
        db: Database,
        directory: Path,
        worker_id: str,
        *,
        rotate_bytes: int,
        retention: Retention,
        backoff: SinkBackoff,
    ) -> None:
        self.directory = directory
        self.writer = ArchiveWriter(directory, worker_id, rotate_bytes)
        self.payloads = ArchivedPayloads(db)
        self.retention = retention
        self.backoff = backoff
        # Originals not in warc_payloads yet, by payload digest: written in batches (a
        # statement per wave cost a round trip in the store step, bench/RESULTS.md) and
        # looked up here first. A crash loses at most these: a later duplicate of one of
        # them is archived whole instead of as a revisit.
        self._unsaved: dict[str, Archived] = {}

    async def keep(self, pages: Sequence[Page]) -> Unarchived | None:
        """Archive the exchanges of the pages not archived yet (safe to repeat: a page is
        archived once); a page with a document gets its response record's pointer."""
        todo = [p for p in pages if p.exchanges and not p.archived]
        if not todo:
            return None
        digests = {
            id(p): payload_digest(p.exchanges[-1].body)
            for p in todo
            if p.document is None
            and p.outcome is not None
            and p.outcome.kind in _REVISITS
            and p.exchanges[-1].status == 200
        }
        originals = {
            d: a.original() for d in digests.values() if (a := self._unsaved.get(d)) is not None
        }
        missing = [d for d in digests.values() if d not in originals]
        originals |= await self.payloads.originals(missing)
        plan: list[tuple[Exchange, Original | None]] = []
        finals: list[int] = []  # index in `plan` of each page's last exchange
        conversions: dict[int, bytes] = {}  # a rendered document's DOM, by that index
        for page in todo:
            # a rendered page's requests first: the document's pointer is its own response
            exchanges = [*page.render_exchanges, *page.exchanges]
            last = len(exchanges) - 1
            for i, exchange in enumerate(exchanges):
                digest = digests.get(id(page)) if i == last else None
                plan.append((exchange, originals.get(digest) if digest else None))
            finals.append(len(plan) - 1)
            if page.rendered_dom is not None and page.document is not None:
                conversions[len(plan) - 1] = page.rendered_dom
        try:
            archived = await self.writer.write(plan, conversions)
        except ArchiveWriteFailed as exc:
            wait = self.backoff.failed(time.monotonic())
            await self._count(exc.code)
            log.error(
                "archive: %s; %d URLs back to pending and claiming paused for %.0fs "
                "(FRONTIER_ARCHIVE=false fetches without an archive)",
                exc,
                len(todo),
                wait,
            )
            return Unarchived(todo, wait, f"archive write failed: {exc}")
        self.backoff.stored()
        for page, index in zip(todo, finals, strict=True):
            page.archived = True
            record = archived[index]
            if page.document is not None:
                page.document = replace(
                    page.document,
                    warc_file=record.location.file,
                    warc_offset=record.location.offset,
                    warc_length=record.location.length,
                    warc_record_id=record.record.record_id,
                )
                digest = record.record.payload_digest
                if digest is not None and record.record.kind == "response":
                    self._unsaved.setdefault(digest, record)
        if len(self._unsaved) >= SAVE_EVERY:
            await self.save()
        return None

    async def save(self) -> None:
        """Write the originals archived since the last save to warc_payloads."""
        unsaved = list(self._unsaved.values())
        if unsaved:
            await self.payloads.remember(unsaved)
            self._unsaved.clear()

    async def keep_exchanges(self, exchanges: Sequence[Exchange]) -> None:
        """Archive exchanges no page owns (robots.txt); a refused write is logged and
        counted (the pages' own writes pause the fetcher)."""
        try:
            await self.writer.write([(e, None) for e in exchanges])
        except ArchiveWriteFailed as exc:
            log.error("archive: %s (robots.txt not archived)", exc)
            await self._count(exc.code)

    def paused_for(self, now: float) -> float:
        return self.backoff.paused_for(now)

    async def maintain(self) -> None:
        """Save the originals archived since the last tick; seal the files of writers
        that died; apply the retention setting."""
        await self.save()
        result = await asyncio.to_thread(upkeep, self.directory, self.retention, now=utcnow())
        if result.sealed:
            log.info("archive: sealed %d files left open by a writer that died", len(result.sealed))
        if result.removed:
            log.info("archive: retention removed %d files", len(result.removed))
            await self.payloads.forget_files(result.removed)

    async def close(self) -> None:
        try:
            await self.save()
        finally:
            await self.writer.close()

    async def _count(self, code: str) -> None:
        try:
            await self.payloads.count_error(code)
        except Exception as exc:  # observability: never fail the batch for it
            log.error("archive: could not count the error: %s", exc)
