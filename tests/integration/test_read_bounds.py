"""The API's reads are bounded (issue 35): each statement within FRONTIER_API_READ_TIMEOUT_S
(503 query_too_expensive, the connection back in the pool), a search within its row
budget (or refused as too broad), a client within FRONTIER_API_READS_PER_CLIENT expensive
reads at once (429), and /healthz on a connection of its own, answering while the pool is
taken and naming no address to an anonymous caller during an outage. Slow reads are made
by holding a table lock in another transaction, never by timing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from frontier.api.app import create_app
from frontier.db import Database
from frontier.documents import BadDocumentQuery, DocumentFilter
from frontier.settings import Settings
from frontier.sinks.postgres import PostgresDocuments, PostgresSink
from tests.conditions import wait_until
from tests.integration.test_documents import seeded_documents, walk
from tests.processes import free_port

TOKEN = "read-bounds-token-0123456789abcdef"


def client_for(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


def settings_for(dsn: str, tmp_path: Path, **values: Any) -> Settings:
    return Settings.load(database_url=dsn, home=tmp_path, _env_file=None, **values)


@asynccontextmanager
async def locked(db: Database, table: str) -> AsyncIterator[None]:
    """`table` locked against every read until the block ends."""
    async with db.transaction() as tx:
        await tx.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        yield


async def test_a_read_past_its_time_limit_answers_503_and_frees_its_connection(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    app = create_app(settings_for(fresh_dsn, tmp_path, api_read_timeout_s=0.3), db)
    async with client_for(app) as api:
        async with locked(db, "sources"):
            slow = await asyncio.wait_for(api.get("/api/v1/sources"), 30)
        assert slow.status_code == 503, slow.text
        error = slow.json()["error"]
        assert error["code"] == "query_too_expensive"
        assert "longer than its limit of 0.3 s" in error["message"]
        assert (await api.get("/api/v1/sources")).status_code == 200


async def test_a_search_fills_its_page_within_its_row_budget_or_is_refused(db: Database) -> None:
    docs, _city, _blog = await seeded_documents(db)
    await PostgresSink(db).write(docs)
    whole = PostgresDocuments(db, sparse_matches=1)  # walks, with the default budgets
    # Walks at most 2 documents and sorts at most 2 matches.
    tight = PostgresDocuments(db, sparse_matches=1, walk_budget=2, sort_budget=2)

    # "library" is in one older document: the walk of the newest 2 finds nothing, and the
    # GIN index gives the one match.
    library = DocumentFilter(search="library")
    assert await walk(tight, library, 5) == await walk(whole, library, 5) != []
    # "harbour" is in four: the walk finds one of them, the sort would need four.
    with pytest.raises(BadDocumentQuery) as refused:
        await tight.page(DocumentFilter(search="harbour"), after=None, limit=5)
    assert str(refused.value).startswith("search: too broad: these words match more than 2")
    assert "narrow it" in str(refused.value)
    # A page filled within the walk (the newest four hold two "harbour" documents: one to
    # show and one saying a next page exists) is answered as before.
    four = PostgresDocuments(db, sparse_matches=1, walk_budget=4, sort_budget=2)
    newest = await four.page(DocumentFilter(search="harbour"), after=None, limit=1)
    assert len(newest.items) == 1 and newest.next is not None


async def test_a_client_over_its_expensive_reads_gets_429_and_healthz_still_answers(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    settings = settings_for(fresh_dsn, tmp_path, api_reads_per_client=2, api_read_timeout_s=60)
    app = create_app(settings, db)
    gate = app.state.context.read_gate
    async with client_for(app) as api:
        async with locked(db, "raw_content"):
            held = [asyncio.create_task(api.get("/api/v1/documents")) for _ in range(2)]
            await wait_until(lambda: gate.in_flight.total() == 2, deadline_s=30, what="2 reads")
            third = await asyncio.wait_for(api.get("/api/v1/documents?search=x"), 30)
            stats = await asyncio.wait_for(api.get("/api/v1/stats"), 30)
            health = await asyncio.wait_for(api.get("/healthz"), 30)
        answers = await asyncio.gather(*held)
    assert (third.status_code, third.headers["Retry-After"]) == (429, "1"), third.text
    assert "FRONTIER_API_READS_PER_CLIENT" in third.json()["error"]["message"]
    assert stats.status_code == 429  # stats counts as an expensive read too
    assert health.json() == {"status": "ok", "database": "ok"}
    assert [answer.status_code for answer in answers] == [200, 200]
    assert gate.in_flight.total() == 0


async def test_healthz_answers_while_every_pooled_connection_is_taken(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    app = create_app(settings_for(fresh_dsn, tmp_path), db)
    async with client_for(app) as api, AsyncExitStack() as taken:
        for _ in range(8):  # the fixture's pool size
            await taken.enter_async_context(db.connection())
        health = await asyncio.wait_for(api.get("/healthz"), 30)
    assert health.json() == {"status": "ok", "database": "ok"}


async def test_healthz_names_no_address_to_an_anonymous_caller_in_an_outage(
    tmp_path: Path,
) -> None:
    port = free_port()
    dsn = f"postgresql://frontier@127.0.0.1:{port}/frontier"
    gone = await Database.connect(dsn, min_size=0, timeout=2)  # nothing listens there
    app = create_app(settings_for(dsn, tmp_path, api_token=TOKEN), gone)
    try:
        async with client_for(app) as api:
            anonymous = await api.get("/healthz")
            operator = await api.get("/healthz", headers={"Authorization": f"Bearer {TOKEN}"})
    finally:
        await gone.close()
    assert anonymous.status_code == 503
    assert anonymous.json()["error"]["message"] == "database unavailable"
    assert str(port) not in anonymous.text
    assert operator.status_code == 503
    assert f"127.0.0.1:{port}" in operator.json()["error"]["message"]
