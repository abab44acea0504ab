"""The content sinks: PostgreSQL raw_content, and Elasticsearch (a real one when
FRONTIER_TEST_ELASTICSEARCH_URL is set, else the strict in-repo stand-in)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from frontier.db import Database
from frontier.sinks import DocumentRejected, RawDocument, SinkUnavailable
from frontier.sinks.elasticsearch import ElasticsearchSink
from frontier.sinks.postgres import PostgresSink
from tests.es_standin import ElasticsearchStandIn
from tests.fetch_harness import after, article, fetcher_for, frontier_row, submit
from tests.local_site import LocalSite

REAL_ES = os.environ.get("FRONTIER_TEST_ELASTICSEARCH_URL")


def doc(n: int, **changes: object) -> RawDocument:
    values: dict[str, object] = dict(
        url_hash=f"{n:064x}", url=f"http://a.test/{n}", final_url=None, source_id=None,
        source_name="manual", host="a.test", origin="manual", title=f"T{n}", body="b" * n,
        summary=None, author=None, published_at=datetime(2026, 1, 1, tzinfo=UTC),
        image_url=None, language="en", content_hash=f"{n:064x}", word_count=1,
        extractor="generic", http_status=200, fetched_at=datetime(2026, 1, 2, tzinfo=UTC),
    )  # fmt: skip
    values.update(changes)
    return RawDocument(**values)  # type: ignore[arg-type]


async def test_postgres_sink_upserts_idempotently(db: Database) -> None:
    sink = PostgresSink(db)
    await sink.write([doc(1), doc(2)])
    await sink.write([doc(1, title="replaced")])
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 2
    stored = await sink.get(f"{1:064x}")
    assert stored is not None and stored["title"] == "replaced"


@pytest.fixture
async def standin() -> AsyncIterator[ElasticsearchStandIn]:
    server = await ElasticsearchStandIn().start()
    try:
        yield server
    finally:
        await server.stop()


async def test_es_sink_creates_the_index_and_bulk_indexes(standin: ElasticsearchStandIn) -> None:
    url = REAL_ES or standin.url
    sink = ElasticsearchSink(url, index="raw_content_test", flush_docs=3, flush_interval_s=0.05)
    try:
        await sink.ensure_index()
        await sink.ensure_index()  # exists: left alone
        await sink.write([doc(1), doc(2), doc(3)])  # flushed by size
        await sink.write([doc(1, title="again")])  # flushed by time; same id replaces
    finally:
        await sink.close()
    if REAL_ES:
        return
    assert standin.rejected_requests == []
    stored = standin.indices["raw_content_test"]
    assert sorted(stored) == [f"{n:064x}" for n in (1, 2, 3)]
    assert stored[f"{1:064x}"]["title"] == "again" and standin.bulk_requests == 2


async def test_es_sink_reports_refused_documents(standin: ElasticsearchStandIn) -> None:
    sink = ElasticsearchSink(standin.url, flush_docs=1)
    try:
        await sink.ensure_index()
        with pytest.raises(DocumentRejected) as caught:
            await sink.write([doc(5, word_count="many")])
        assert caught.value.url_hashes == (f"{5:064x}",)
    finally:
        await sink.close()


async def test_es_down_puts_claimed_urls_back(
    db: Database, local_site: LocalSite, standin: ElasticsearchStandIn
) -> None:
    sink = ElasticsearchSink(standin.url, flush_docs=1, attempts=2, backoff_s=0.01)
    await sink.ensure_index()
    standin.down = True
    with pytest.raises(SinkUnavailable):
        await sink.write([doc(1)])
    local_site.serve("/a", article("A"))
    await submit(db, local_site.url("/a"))
    try:
        async with fetcher_for(db, sink=sink) as fetcher:
            await fetcher.run_once()
            row = await frontier_row(db, local_site.url("/a"))
            assert (row["status"], row["retry_count"]) == ("pending", 0)
            standin.down = False
            assert (await fetcher.run_once(now=after(3600))).claimed == 1  # past the wait
    finally:
        await sink.close()
    assert (await frontier_row(db, local_site.url("/a")))["status"] == "fetched"
    assert list(standin.indices["raw_content"]) == [row["url_hash"]]
