"""The PostgreSQL content sink: batched upserts into `raw_content`, and its reader,
`PostgresDocuments` (SQL in `frontier/sql/raw_content.sql`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import asyncpg

from frontier.db import Database
from frontier.documents import (
    BadDocumentQuery,
    Cursor,
    DocumentFilter,
    DocumentPage,
    ExportQuery,
    json_ready,
    page_of,
)
from frontier.errors import DatabaseUnavailable
from frontier.export import PAGE_ROWS
from frontier.sinks import DOCUMENT_FIELDS, RawDocument, SinkUnavailable
from frontier.sinks.payload import LISTS
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
        columns = [
            [json.dumps(getattr(doc, name)) for doc in ordered]
            if name == "tags"  # unnest takes no ragged arrays: JSON text each
            else [len(doc.paragraphs) for doc in ordered]
            if name == "paragraphs"  # each one's count: they come as one array (below)
            else [getattr(doc, name) for doc in ordered]
            for name in DOCUMENT_FIELDS
        ]
        # Every document's paragraphs in one array, each document's slice starting where
        # the previous one's ended: no JSON text a document to write here (8-57 us a
        # document on bench.fetch's pages) and to parse there.
        paragraphs = [paragraph for doc in ordered for paragraph in doc.paragraphs]
        try:
            await self._db.execute(SQL["upsert_many"], *columns, paragraphs)
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

    async def stored(self, url_hashes: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The documents stored under these url_hashes, as they were written (those not
        stored are not in the answer), in one statement: each its fields' values as read
        (every field of DOCUMENT_FIELDS, in its order; `document_of` makes it a
        RawDocument)."""
        if not url_hashes:
            return {}
        records = await self._db.fetch(SQL["documents_by_hashes"], list(url_hashes))
        return {r["url_hash"]: dict(r) for r in records}

    async def health(self) -> str:
        try:
            await self._db.fetchval(SQL["health"])
        except (DatabaseUnavailable, OSError, asyncpg.InterfaceError) as exc:
            raise SinkUnavailable(f"raw_content: {exc}") from None
        return "PostgreSQL table raw_content"

    async def close(self) -> None:
        """The database belongs to the caller."""


def document_of(record: Mapping[str, Any]) -> RawDocument:
    """The RawDocument of a raw_content row as read (`stored`)."""
    values = dict(record)
    for name in LISTS:  # arrays in the table, tuples in a RawDocument
        values[name] = tuple(values[name] or ())
    if values["source_id"] is not None:  # asyncpg's own UUID type: the standard one
        values["source_id"] = UUID(str(values["source_id"]))
    return RawDocument(**values)


# A search estimated to match fewer documents than this reads them from the GIN index and
# sorts them; one matching more walks fetched_at backwards, finding a page within few rows.
SPARSE_MATCHES = 20_000
# The row budget of one page of a search: documents walked newest first (each one's vector
# checked), and matches read from the GIN index and sorted. A search that fills no page
# within the walk and matches more than the sort's budget is refused as too broad.
WALK_BUDGET = 10_000
SORT_BUDGET = 20_000

# "No bound" in the keyset statements, which take no NULLs: asyncpg sends these two as
# PostgreSQL's 'infinity' and '-infinity'; "g" sorts above every hex url_hash.
_INFINITY = datetime.max.replace(tzinfo=UTC)
_MINUS_INFINITY = datetime.min.replace(tzinfo=UTC)


class PostgresDocuments:
    """Reads `raw_content`: one statement per index (see raw_content.sql)."""

    name = "postgres"

    def __init__(
        self,
        db: Database,
        *,
        sparse_matches: int = SPARSE_MATCHES,
        walk_budget: int = WALK_BUDGET,
        sort_budget: int = SORT_BUDGET,
    ) -> None:
        self._db = db
        self._sparse = sparse_matches
        self._walk_budget = walk_budget
        self._sort_budget = sort_budget

    async def page(
        self, where: DocumentFilter, *, after: Cursor | None, limit: int
    ) -> DocumentPage:
        keyset = (after.fetched_at, after.url_hash) if after else (_INFINITY, "g")
        since = where.since if where.since is not None else _MINUS_INFINITY
        common = (*keyset, since, limit + 1)
        extra: tuple[object, ...]
        if where.search:
            extra = (where.search, where.source_id, where.host)
            rows = await self._search(common, extra, where.one_per_cluster)
        else:
            if where.source_id is not None:
                query, extra = "recent_by_source", (where.source_id, where.host)
            elif where.host is not None:
                query, extra = "recent_by_host", (where.host,)
            else:
                query, extra = "recent", ()
            rows = await self._db.fetch(SQL[query], *common, *extra, where.one_per_cluster)
        return page_of(
            [dict(row) for row in rows], limit, lambda r: Cursor(r["fetched_at"], r["url_hash"])
        )

    async def _search(
        self, common: tuple[object, ...], extra: tuple[object, ...], one_per_cluster: bool
    ) -> list[Any]:
        """Choose the plan by how many documents the words match, as the planner estimates
        it from its statistics (planning only: counting the matches of a common word from
        the index grows with the table; bench/api_reads.py): many, walk fetched_at
        backwards, at most the walk budget; few, or a walk that found no page within its
        budget, read the matches from the GIN index and sort them, when there are at most
        the sort budget of them. Otherwise the words are too broad for one page:
        BadDocumentQuery."""
        words = extra[0]
        async with self._db.transaction() as tx:
            await tx.execute(SQL["custom_plans"])
            plan = json.loads(await tx.fetchval(SQL["search_estimate"], words))
            if plan[0]["Plan"]["Plan Rows"] >= self._sparse:
                rows = list(
                    await tx.fetch(
                        SQL["search_walk"], *common, *extra, self._walk_budget, one_per_cluster
                    )
                )
                wanted = common[3]
                if len(rows) == wanted or not await tx.fetchval(
                    SQL["search_walk_cut"], *common[:3], self._walk_budget, *extra[1:]
                ):
                    return rows
            await tx.execute(SQL["gin_only"])
            matches = await tx.fetchval(SQL["search_matches"], words, self._sort_budget + 1)
            if matches > self._sort_budget:
                raise BadDocumentQuery(
                    f"search: too broad: these words match more than {self._sort_budget:,} "
                    f"documents, and too few of the newest to fill a page; narrow it: a "
                    f"shorter time (since), a source or host, or more words"
                )
            return list(await tx.fetch(SQL["search"], *common, *extra, one_per_cluster))

    async def get(self, url_hash: str) -> dict[str, Any] | None:
        record = await self._db.fetchrow(SQL["by_hash"], url_hash)
        return json_ready(dict(record)) if record else None

    async def export(
        self, query: ExportQuery, *, page_rows: int = PAGE_ROWS
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """The documents matching `query`, oldest first, a page (rows of the query's
        fields, values as asyncpg gives them) at a time (`export_page`). The next page's
        statement is sent before this page is handed over, so the server reads it while
        this one is written (at most two pages in memory)."""
        if query.where.search:
            raise BadDocumentQuery("search: an export takes no search words")
        where, fields = query.where, query.fields
        light = not query.with_body

        def page_after(after: tuple[datetime, str]) -> asyncio.Task[list[Any]]:
            return asyncio.ensure_future(
                self._db.fetch(
                    SQL["export_page"],
                    *after,
                    query.until,
                    where.source_id,
                    where.host,
                    query.language,
                    where.one_per_cluster,
                    page_rows,
                    query.with_body,
                )
            )

        pending: asyncio.Task[list[Any]] | None = page_after((where.since or _MINUS_INFINITY, ""))
        try:
            while pending is not None:
                records = await pending
                pending = None
                if len(records) == page_rows:
                    pending = page_after((records[-1]["fetched_at"], records[-1]["url_hash"]))
                if records:
                    yield [
                        {name: r[name] for name in fields} if light else dict(r) for r in records
                    ]
        finally:
            if pending is not None:  # the reader stopped early
                pending.cancel()
                with contextlib.suppress(BaseException):
                    await pending

    async def close(self) -> None:
        """The database belongs to the caller."""
