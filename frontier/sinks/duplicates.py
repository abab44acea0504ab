"""The duplicate-content check made before a document is stored: is its content_hash
already fetched under another URL? It reads url_frontier's content_hash index, so it holds
whichever sink stores the documents (SQL in `frontier/sql/raw_content.sql`)."""

from __future__ import annotations

from collections.abc import Sequence

from frontier.db import Database
from frontier.sql import load

SQL = load("raw_content")


class DuplicateContent:
    """Which URLs' bodies are already stored under another URL."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def indexed_elsewhere(self, pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
        """url_hash -> the URL already holding the same content_hash."""
        if not pairs:
            return {}
        records = await self._db.fetch(
            SQL["indexed_elsewhere"], [p[0] for p in pairs], [p[1] for p in pairs]
        )
        return {r["url_hash"]: r["original"] for r in records}
