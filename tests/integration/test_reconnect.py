"""Connections dropped by the server (pg_terminate_backend, as a restart does to every
backend): the seam turns the loss into `DatabaseUnavailable` and works again on the next
statement; the fetcher's LISTEN connection is opened again and still wakes it; a page
fetched while the database is away is stored and completed once it answers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from frontier.db import Database
from frontier.errors import DatabaseUnavailable
from frontier.sinks import RawDocument
from frontier.sinks.postgres import PostgresSink
from tests.conditions import wait_until
from tests.fetch_harness import article, fetcher_for, frontier_row, submit
from tests.local_site import LocalSite

DEADLINE_S = 30.0


def until(check: Callable[[], Any], what: str) -> Awaitable[Any]:
    return wait_until(check, deadline_s=DEADLINE_S, what=what)


async def backend_running(db: Database, query_start: str) -> int | None:
    pid: int | None = await db.fetchval(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid() AND query LIKE $1 || '%' LIMIT 1",
        query_start,
    )
    return pid


async def test_a_dropped_connection_is_unavailable_then_works_again(
    db: Database, fresh_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="frontier.db")
    victim = await Database.connect(fresh_dsn, max_size=2)
    try:
        sleeper = asyncio.create_task(victim.fetchval("SELECT pg_sleep(60)"))
        pid = await until(lambda: backend_running(db, "SELECT pg_sleep"), "the sleep started")
        assert await db.fetchval("SELECT pg_terminate_backend($1)", pid)
        with pytest.raises(DatabaseUnavailable, match=r"database unavailable at .*: ") as caught:
            await sleeper
        assert "administrator command" in str(caught.value)
        assert victim.outage.down
        victim.outage.report(caught.value, 0.5)
        assert await victim.fetchval("SELECT 41 + 1") == 42  # the pool reconnected
        assert not victim.outage.down
    finally:
        await victim.close()
    messages = [r.getMessage() for r in caplog.records if r.name == "frontier.db"]
    assert len(messages) == 2, messages
    assert messages[0].startswith("database unavailable at ")
    assert messages[0].endswith("retrying in 0.5 s")
    assert messages[1].startswith("database reachable again after ")


async def test_an_idle_connection_terminated_before_its_socket_closes_is_a_loss(
    db: Database, fresh_dsn: str
) -> None:
    """A pooled connection's backend is terminated while it sits idle, and the pool hands it
    out after the client read the server's FATAL message but before it saw the socket close
    (the proxy holds the close). asyncpg then fails with an InternalClientError ("cannot
    switch to state 12; another operation (2) is in progress"); the seam reports it as the
    retryable `DatabaseUnavailable`, and once the close arrives the next try works. (Seen
    in CI: the spider's writes after such a termination escaped as an unknown error.)"""
    from tests.db_proxy import DatabaseProxy

    proxy = DatabaseProxy(fresh_dsn)
    proxy.hold_close = asyncio.Event()
    dsn = await proxy.start()
    sep = "&" if "?" in dsn else "?"
    victim = await Database.connect(f"{dsn}{sep}application_name=idle-victim", max_size=1)
    try:
        assert await victim.fetchval("SELECT 1") == 1
        assert await db.fetchval(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = 'idle-victim'"
        )
        await until(lambda: proxy.closes_held == 1, "the server closed the connection")
        with pytest.raises(
            DatabaseUnavailable, match=r"cannot switch to state \d+; another operation"
        ):
            await victim.fetchval("SELECT 2")
        proxy.hold_close.set()
        assert await victim.outage.ride_out(lambda: victim.fetchval("SELECT 41 + 1"), 30) == 42
    finally:
        await victim.close()
        await proxy.stop()


async def test_an_unexpected_error_in_a_spider_write_is_counted_not_raised(
    db: Database, fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails with something no one foresaw (a driver bug) is a failed write:
    counted in `frontier/submit_errors`, so the crawl's exit code says so, instead of
    escaping to Scrapy's close_spider, which logs it and exits 0."""
    from scrapy.utils.test import get_crawler

    from spider.items import ArticleLink
    from spider.pipeline import DSN, FrontierPipeline
    from tests.fetch_harness import manual_ref

    async def broken(*_args: Any) -> None:
        raise RuntimeError("a bug in the driver")

    pipeline = FrontierPipeline(get_crawler(settings_dict={DSN: fresh_dsn}))
    monkeypatch.setattr(pipeline, "_write_patiently", broken)
    ref = await manual_ref(db)
    urls = [f"https://news.example/2024/01/0{i}/story" for i in range(1, 4)]
    await pipeline.open_spider()
    for url in urls:
        await pipeline.process_item(
            ArticleLink(url=url, source=ref, parent_url="https://news.example/", depth=1)
        )
    await pipeline.close_spider()  # flushes the buffer; does not raise
    assert pipeline.crawler.stats.get_value("frontier/submit_errors") == len(urls)


async def test_the_fetcher_listens_again_after_its_connection_is_dropped(
    db: Database, fresh_dsn: str, local_site: LocalSite
) -> None:
    local_site.serve("/a", article("after the drop"))
    fetcher_db = await Database.connect(fresh_dsn, max_size=4)
    stop = asyncio.Event()
    try:
        # A long idle poll: only a NOTIFY on the new LISTEN connection wakes it quickly.
        async with fetcher_for(fetcher_db, idle_poll_s=600.0) as fetcher:
            run = asyncio.create_task(fetcher.run(stop=stop))
            first = await until(lambda: backend_running(db, "LISTEN"), "the fetcher listens")
            await db.fetchval("SELECT pg_terminate_backend($1)", first)

            async def listening_again() -> int | None:
                pid = await backend_running(db, "LISTEN")
                return pid if pid not in (None, first) else None

            await until(listening_again, "the fetcher listens again")
            await submit(db, local_site.url("/a"))

            async def fetched() -> bool:
                row = await frontier_row(db, local_site.url("/a"))
                return row["status"] == "fetched"

            await until(fetched, "the submitted URL is fetched")
            stop.set()
            await asyncio.wait_for(run, DEADLINE_S)
    finally:
        stop.set()
        await fetcher_db.close()


class LosesTheDatabaseTwice:
    """The PostgreSQL sink, but its first two writes meet a dropped database connection
    (as a write during a restart does); a stand-in for the outage, the database is real."""

    name = "postgres"

    def __init__(self, db: Database) -> None:
        self.sink = PostgresSink(db)
        self.failures = 0

    async def write(self, documents: Sequence[RawDocument]) -> None:
        if self.failures < 2:
            self.failures += 1
            raise DatabaseUnavailable("database unavailable at test: connection lost")
        await self.sink.write(documents)

    async def close(self) -> None:
        await self.sink.close()


async def test_a_fetched_page_waits_for_the_database_instead_of_being_lost(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/held", article("held across the outage"))
    await submit(db, local_site.url("/held"))
    sink = LosesTheDatabaseTwice(db)
    async with fetcher_for(db, sink=sink) as fetcher:
        assert (await fetcher.run_once()).claimed == 1
    assert sink.failures == 2
    row = await frontier_row(db, local_site.url("/held"))
    assert (row["status"], row["retry_count"], row["fetch_count"]) == ("fetched", 0, 1)
    assert len(local_site.hits("/held")) == 1  # stored after the retries, not fetched again
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 1


async def test_spider_writes_wait_for_the_database_and_go_through(
    db: Database, fresh_dsn: str
) -> None:
    """The network to PostgreSQL is cut while the spider's pipeline writes a batch: the write
    waits with backoff, and once the network is back it goes through; nothing is lost."""
    from scrapy.utils.test import get_crawler

    from frontier.queue_values import Candidate
    from frontier.states import Origin
    from spider.pipeline import DSN, FrontierPipeline
    from tests.db_proxy import DatabaseProxy
    from tests.fetch_harness import manual_ref

    proxy = DatabaseProxy(fresh_dsn)
    pipeline = FrontierPipeline(get_crawler(settings_dict={DSN: await proxy.start()}))
    ref = await manual_ref(db)
    urls = [f"https://news.example/2024/01/0{i}/story" for i in range(1, 6)]
    await pipeline.open_spider()
    try:
        proxy.cut()
        write = asyncio.create_task(
            pipeline._write([Candidate(u, ref, Origin.SPIDER) for u in urls], [])
        )
        deadline = asyncio.get_running_loop().time() + 30
        while proxy.refused < 2:  # it tried again while the network was down
            assert asyncio.get_running_loop().time() < deadline and not write.done()
            await asyncio.wait({write}, timeout=0.05)
        proxy.restore()
        await asyncio.wait_for(write, 60)
    finally:
        assert pipeline._db is not None
        await pipeline._db.close()
        await proxy.stop()
    stats = pipeline.crawler.stats.get_stats()
    assert stats.get("frontier/submit_errors") is None
    assert stats["frontier/new_urls"] == len(urls)
    rows = await db.fetch("SELECT url FROM url_frontier WHERE origin = 'spider'")
    assert sorted(r["url"] for r in rows) == urls
