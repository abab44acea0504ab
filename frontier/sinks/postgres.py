"""The PostgreSQL content sink: batched upserts into `raw_content` (SQL in
`frontier/sql/raw_content.sql`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg

from frontier.db import Database
from frontier.sinks import DOCUMENT_FIELDS, RawDocument, SinkUnavailable
from frontier.sql import load

SQL = load("raw_content")


class PostgresSink:
    name = "postgres"

    def __init__(self, db: Database) -> None:
        self._db = db

    async def write(self, documents: Sequence[RawDocument]) -> None:
        if not documents:
            return
        unique = {doc.url_hash: doc for doc in documents}  # last write of a URL wins
        ordered = [unique[key] for key in sorted(unique)]
        columns = [[getattr(doc, name) for doc in ordered] for name in DOCUMENT_FIELDS]
        try:
            await self._db.execute(SQL["upsert_many"], *columns)
        except (OSError, asyncpg.InterfaceError, asyncpg.PostgresConnectionError) as exc:
            raise SinkUnavailable(f"raw_content: {exc}") from None

    async def get(self, url_hash: str) -> dict[str, Any] | None:
        record = await self._db.fetchrow(SQL["by_hash"], url_hash)
        return dict(record) if record else None

    async def close(self) -> None:
        """The database belongs to the caller."""
