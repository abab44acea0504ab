"""PostgreSQL stopped and started again under load, with real `frontier fetch`, `frontier
poll` and `frontier serve` processes on a PostgreSQL of this test's own (the session server
is shared with every other test): every process keeps running, logs one line when the
database goes and one when it is back, the API answers 503 while it is down, and every URL
ends fetched exactly once, including pages whose fetch finished while the database was
down (their store and completion are retried while the lease holds)."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from frontier import migrate
from frontier.clock import utcnow
from frontier.db import Database
from frontier.embedded import EmbeddedPostgres
from frontier.errors import DatabaseUnavailable
from frontier.sources import SourceRepository
from tests.conditions import wait_until
from tests.fetch_harness import article, submit
from tests.local_site import LocalSite
from tests.processes import free_port, frontier_process, read_log

DEADLINE_S = 120.0  # generous: a loaded 2-core machine
SITES = 5
PAGES_PER_SITE = 50
FEED_ENTRIES = 20
UNAVAILABLE = "database unavailable at "
REACHABLE = "database reachable again after "
ENV = {
    "FRONTIER_SEED_DEFAULT_SOURCES": "false",
    "FRONTIER_DEFAULT_DELAY_MS": "0",
    "FRONTIER_POLL_TICK_S": "0.5",
    "FRONTIER_DB_RECONNECT_MAX_S": "1",
    "FRONTIER_LEASE_SECONDS": "40",  # a claim lost with the server comes back within a minute
    "FRONTIER_SINK_RETRY_S": "1",
}


class RestartablePostgres:
    """An embedded PostgreSQL of this test's own that can be stopped and started again on
    the same data directory and socket (pg_ctl, as the server's unprivileged user)."""

    def __init__(self) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="frontier-restart-"))
        self.embedded = EmbeddedPostgres(self.home, database="frontier", delete_on_stop=True)
        self.dsn = ""

    def start(self) -> str:
        self.dsn = self.embedded.start()
        self.embedded.configure({"fsync": "off", "synchronous_commit": "off"})
        return self.dsn

    def stop_server(self) -> None:
        self.embedded.pg_ctl("-w", "stop", "-m", "fast")

    def start_server(self) -> None:
        self.embedded.start_server()  # same data, same socket directory

    def close(self) -> None:
        self.embedded.stop()


@pytest.fixture
def restartable() -> Iterator[RestartablePostgres]:
    server = RestartablePostgres()
    server.start()
    try:
        migrate.upgrade(server.dsn)
        yield server
    finally:
        server.close()


def feed(site: LocalSite) -> str:
    when = format_datetime(utcnow())
    items = "".join(
        f"<item><title>Entry {i}</title><link>{site.url(f'/entry/{i}')}</link>"
        f"<guid>{site.url(f'/entry/{i}')}</guid><pubDate>{when}</pubDate></item>"
        for i in range(FEED_ENTRIES)
    )
    return (
        f"<?xml version='1.0'?><rss version='2.0'><channel><title>Restart feed</title>"
        f"<link>{site.origin}/</link><description>d</description>{items}"
        f"</channel></rss>"
    )


class Gate:
    """Pages answer while `open` is set; `held` counts requests waiting at the gate."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.open.set()
        self.held = 0
        self.answered = 0

    def page(self, title: str, word: str) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(_request: web.Request) -> web.Response:
            if not self.open.is_set():
                self.held += 1
                await self.open.wait()
            self.answered += 1
            return web.Response(text=article(title, word=word), content_type="text/html")

        return handler


@pytest.fixture
async def sites() -> AsyncIterator[list[LocalSite]]:
    started = [await LocalSite(address=f"127.0.0.{40 + i}").start() for i in range(SITES)]
    try:
        yield started
    finally:
        for site in started:
            await site.stop()


async def quietly(db: Database, query: str) -> Any:
    """A read that tolerates the database being down (then None)."""
    try:
        return await db.fetchval(query)
    except DatabaseUnavailable:
        return None


async def test_postgres_restart_under_load_loses_and_duplicates_nothing(
    restartable: RestartablePostgres, sites: list[LocalSite], tmp_path: Path
) -> None:
    gate = Gate()
    urls = []
    for s, site in enumerate(sites):
        for i in range(PAGES_PER_SITE):
            site.route(f"/p{i}", gate.page(f"{site.address} page {i}", f"w{s}x{i}"))
            urls.append(site.url(f"/p{i}"))
    home = sites[0]
    home.serve("/feed.xml", feed(home), content_type="application/rss+xml")
    for i in range(FEED_ENTRIES):
        home.route(f"/entry/{i}", gate.page(f"feed entry {i}", f"entry{i}"))
    total = len(urls) + FEED_ENTRIES
    dsn = restartable.dsn
    db = await Database.connect(dsn, max_size=2, reconnect_max_s=0.5)
    port = free_port()
    try:
        await submit(db, *urls)
        await SourceRepository(db).add("restart feed", feed_url=home.url("/feed.xml"))
        async with (
            frontier_process(dsn, tmp_path, "fetch", "--workers", "8", **ENV) as fetcher,
            frontier_process(dsn, tmp_path, "poll", **ENV) as poller,
            frontier_process(dsn, tmp_path, "serve", "--port", str(port), **ENV) as api,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client,
        ):
            processes = [fetcher, poller, api]

            def until(check: Callable[[], Any], what: str) -> Awaitable[Any]:
                return wait_until(check, *processes, deadline_s=DEADLINE_S, what=what)

            async def stats_status() -> int | None:
                try:
                    return (await client.get("/api/v1/stats")).status_code
                except httpx.TransportError:
                    return None  # not listening yet

            assert await until(stats_status, "the API") == 200

            async def under_load() -> bool:
                done = await quietly(
                    db, "SELECT count(*) FROM url_frontier WHERE status = 'fetched'"
                )
                entries = await quietly(
                    db, "SELECT count(*) FROM url_frontier WHERE origin = 'feed'"
                )
                return bool(done and done >= 40 and entries == FEED_ENTRIES)

            await until(under_load, "some pages fetched and the feed polled")
            gate.open.clear()  # requests now in flight are held across the outage
            await until(lambda: gate.held >= 3, "held requests")
            await asyncio.to_thread(restartable.stop_server)

            async def noticed() -> bool:
                down = await client.get("/api/v1/stats")
                if down.status_code != 503:
                    return False
                assert down.json()["error"]["code"] == "unavailable"
                return all(UNAVAILABLE in read_log(tmp_path, name) for name in ("fetch", "poll"))

            await until(noticed, "every process to notice the outage")
            # Pages answered now are fetched while the database is down: their store and
            # completion must wait for it, not be lost.
            held = gate.held
            gate.open.set()
            await until(lambda: gate.answered >= held, "answers")
            await asyncio.to_thread(restartable.start_server)

            async def all_fetched() -> bool:
                done = await quietly(
                    db, "SELECT count(*) FROM url_frontier WHERE status = 'fetched'"
                )
                return done == total

            await until(all_fetched, f"all {total} URLs fetched")
            assert (await client.get("/api/v1/stats")).status_code == 200

            def recovered() -> bool:
                return all(
                    REACHABLE in read_log(tmp_path, name) for name in ("fetch", "poll", "serve")
                )

            await until(recovered, "reachable-again lines")
            assert [p.returncode for p in processes] == [None, None, None]

        statuses = dict(await db.fetch("SELECT status, count(*) FROM url_frontier GROUP BY 1"))
        assert statuses == {"fetched": total}, statuses
        assert await db.fetchval("SELECT count(*) FROM raw_content") == total
        assert await db.fetchval("SELECT count(DISTINCT content_hash) FROM raw_content") == total
        ok = await db.fetch(
            "SELECT url, count(*) FROM fetch_log WHERE kind = 'page' "
            "AND outcome = 'ok' GROUP BY url"
        )
        assert len(ok) == total and all(row["count"] == 1 for row in ok)  # fetched once each
        for name in ("fetch", "poll", "serve"):
            text = read_log(tmp_path, name)
            lines = text.count(UNAVAILABLE)
            assert 1 <= lines <= 3, (name, lines)  # one per outage seen, never a flood
            assert REACHABLE in text, name
            assert "Traceback" not in text, (name, text[-3000:])
    finally:
        gate.open.set()
        await db.close()
