"""The duplicate checks made before a document is stored, and what storing a variant's
document under its canonical records. Both read url_frontier (its content_hash index and
its status), so they hold whichever sink stores the documents (SQL in
`frontier/sql/raw_content.sql`; recording goes through the queue's own statement)."""

from __future__ import annotations

from collections.abc import Sequence

from frontier.db import Database
from frontier.queue import FetchedElsewhere, QueueRepository
from frontier.sinks import RawDocument
from frontier.sql import load

SQL = load("raw_content")


class DuplicateContent:
    """Which URLs' bodies are already stored under another URL; which canonical URLs are
    already stored; recording canonicals stored from a variant page."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._queue = QueueRepository(db)

    async def indexed_elsewhere(self, pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
        """url_hash -> the URL already holding the same content_hash."""
        if not pairs:
            return {}
        records = await self._db.fetch(
            SQL["indexed_elsewhere"], [p[0] for p in pairs], [p[1] for p in pairs]
        )
        return {r["url_hash"]: r["original"] for r in records}

    async def statuses(self, url_hashes: Sequence[str]) -> dict[str, str]:
        """url_hash -> frontier status of those among `url_hashes` in the frontier."""
        if not url_hashes:
            return {}
        records = await self._db.fetch(SQL["frontier_statuses"], list(url_hashes))
        return {r["url_hash"]: r["status"] for r in records}

    async def record_canonicals(self, documents: Sequence[RawDocument]) -> set[str]:
        """Record the URLs these documents were stored under (canonicals, each stored from
        the variant page in its `final_url`) as fetched, so none is fetched again."""
        rows = [
            FetchedElsewhere(
                url_hash=d.url_hash,
                url=d.url,
                host=d.host,
                source_id=d.source_id,
                origin=d.origin,
                parent_url=d.final_url,
                content_hash=d.content_hash,
                http_status=d.http_status,
            )
            for d in documents
        ]
        return await self._queue.record_fetched(rows)
