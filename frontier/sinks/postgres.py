"""The PostgreSQL content sink: batched upserts into `raw_content`, and its reader,
`PostgresDocuments` (SQL in `frontier/sql/raw_content.sql`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import asyncpg

from frontier.db import Database
from frontier.documents import Cursor, DocumentFilter, DocumentPage, json_ready, page_of
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

    async def delete(self, url_hashes: Sequence[str]) -> None:
        if not url_hashes:
            return
        try:
            await self._db.execute(SQL["delete_many"], sorted(set(url_hashes)))
        except (OSError, asyncpg.InterfaceError, asyncpg.PostgresConnectionError) as exc:
            raise SinkUnavailable(f"raw_content: {exc}") from None

    async def get(self, url_hash: str) -> dict[str, Any] | None:
        record = await self._db.fetchrow(SQL["by_hash"], url_hash)
        return dict(record) if record else None

    async def close(self) -> None:
        """The database belongs to the caller."""


# A search estimated to match fewer documents than this reads them from the GIN index and
# sorts them; one matching more walks fetched_at backwards, finding a page within few rows.
SPARSE_MATCHES = 20_000

# "No bound" in the keyset statements, which take no NULLs: asyncpg sends these two as
# PostgreSQL's 'infinity' and '-infinity'; "g" sorts above every hex url_hash.
_INFINITY = datetime.max.replace(tzinfo=UTC)
_MINUS_INFINITY = datetime.min.replace(tzinfo=UTC)


class PostgresDocuments:
    """Reads `raw_content`: one statement per index (see raw_content.sql)."""

    name = "postgres"

    def __init__(self, db: Database, *, sparse_matches: int = SPARSE_MATCHES) -> None:
        self._db = db
        self._sparse = sparse_matches

    async def page(
        self, where: DocumentFilter, *, after: Cursor | None, limit: int
    ) -> DocumentPage:
        keyset = (after.fetched_at, after.url_hash) if after else (_INFINITY, "g")
        since = where.since if where.since is not None else _MINUS_INFINITY
        common = (*keyset, since, limit + 1)
        extra: tuple[object, ...]
        if where.search:
            extra = (where.search, where.source_id, where.host)
            rows = await self._search(common, extra)
        else:
            if where.source_id is not None:
                query, extra = "recent_by_source", (where.source_id, where.host)
            elif where.host is not None:
                query, extra = "recent_by_host", (where.host,)
            else:
                query, extra = "recent", ()
            rows = await self._db.fetch(SQL[query], *common, *extra)
        return page_of(
            [dict(row) for row in rows], limit, lambda r: Cursor(r["fetched_at"], r["url_hash"])
        )

    async def _search(self, common: tuple[object, ...], extra: tuple[object, ...]) -> list[Any]:
        """Choose the plan by how many documents the words match, as the planner estimates
        it from its statistics (planning only: counting the matches of a common word from
        the index costs 100 ms at 10^6 documents): few, read them from the GIN index and
        sort; many, walk fetched_at backwards."""
        async with self._db.transaction() as tx:
            await tx.execute(SQL["custom_plans"])
            plan = json.loads(await tx.fetchval(SQL["search_estimate"], extra[0]))
            if plan[0]["Plan"]["Plan Rows"] < self._sparse:
                await tx.execute(SQL["gin_only"])
            return list(await tx.fetch(SQL["search"], *common, *extra))

    async def get(self, url_hash: str) -> dict[str, Any] | None:
        record = await self._db.fetchrow(SQL["by_hash"], url_hash)
        return json_ready(dict(record)) if record else None

    async def close(self) -> None:
        """The database belongs to the caller."""
