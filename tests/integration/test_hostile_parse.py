"""Hostile feeds and sitemaps (issue 35, item 1): what a server sends is parsed in a parse
process (`frontier.parse_pool`) under a time, CPU and memory limit, never on the event
loop that serves the API and the fetcher; a parse over a limit fails its poll with the
limit named, and the source backs off; the budgets hold per file and per poll; stopping
the poller never waits for a parse.

Real local servers on 127.0.0.1 serve the documents (`bench.hostile_documents`). Nothing
is timed: the event loop's progress is a ticker counting while each parse is awaited.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bench.hostile_documents import empty_elements_sitemap, malformed_feed, sitemap_index
from frontier.db import Database
from frontier.parse_pool import ParseLimits, ParsePool
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.sources import Source, SourceRepository
from poller.policy import PollPolicy
from poller.scheduler import Poller
from poller.sitemap_parse import MAX_ELEMENTS
from tests.conditions import wait_until
from tests.local_site import LocalSite
from tests.watched_pool import WatchedPool, modules_loaded, watching

T0 = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)
POLICY = PollPolicy(concurrency=4, lease_s=600)
BIG = 8 * 1024 * 1024  # inflated: 2 M empty elements, twice the per-file element cap


@pytest.fixture
async def client() -> AsyncIterator[SafeClient]:
    async with SafeClient(HttpLimits("frontier-test/1", allow_private_networks=True)) as c:
        yield c


@pytest.fixture
async def watched() -> AsyncIterator[WatchedPool]:
    async with watching() as pool:
        yield pool


async def state(db: Database, source: Source) -> dict[str, Any]:
    record = await db.fetchrow("SELECT * FROM feed_state WHERE source_id = $1", source.id)
    assert record is not None
    return dict(record)


def serve_hostile(site: LocalSite) -> None:
    site.serve(
        "/index.xml",
        sitemap_index(site.url("/big-1.xml.gz"), site.url("/big-2.xml.gz")),
        content_type="application/xml",
    )
    for path in ("/big-1.xml.gz", "/big-2.xml.gz"):
        site.serve(path, empty_elements_sitemap(BIG), content_type="application/x-gzip")
    site.serve("/feed.xml", malformed_feed(400_000), content_type="application/rss+xml")


async def test_hostile_documents_are_parsed_while_the_event_loop_serves(
    db: Database, client: SafeClient, local_site: LocalSite, watched: WatchedPool
) -> None:
    serve_hostile(local_site)
    repository = SourceRepository(db)
    sitemap = await repository.add("sitemap", sitemap_url=local_site.url("/index.xml"))
    await repository.add("feed", feed_url=local_site.url("/feed.xml"))
    summaries = await Poller(db, client, POLICY, parser=watched).run_once(now=T0)
    assert sorted(s.source for s in summaries) == ["feed", "sitemap"]
    # index, two sitemaps, the feed: each parsed in a parse worker, not this process
    assert len(watched.pids) == 4 and os.getpid() not in watched.pids
    assert len(watched.served_during_parse) == 4 and all(watched.served_during_parse)
    # the per-file element cap stopped both big files, and the poll kept its result
    error = (await state(db, sitemap))["sitemap_last_error"] or ""
    assert error.count(f"{MAX_ELEMENTS} elements per file") == 2


async def test_a_parse_over_its_cpu_limit_fails_the_poll_which_backs_off(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    local_site.serve("/feed.xml", malformed_feed(2 * 1024 * 1024), content_type="text/xml")
    source = await SourceRepository(db).add("feed", feed_url=local_site.url("/feed.xml"))
    policy = replace(POLICY, parse=ParseLimits(cpu_s=1, timeout_s=120))
    async with ParsePool(policy.parse) as parser:
        poller = Poller(db, client, policy, parser=parser)
        [summary] = await poller.run_once(now=T0)
        assert not summary.ok
        assert "CPU limit of 1 s (FRONTIER_PARSE_CPU_S)" in (summary.error or "")
        after = await state(db, source)
        assert after["consecutive_errors"] == 1
        assert after["next_poll_at"] > T0 + timedelta(minutes=1)
        assert "CPU limit" in after["last_error"] and after["poll_lease_owner"] is None
        # not polled again at once
        assert await poller.run_once(now=T0 + timedelta(minutes=1)) == []
    assert len(local_site.hits("/feed.xml")) == 1
    logged = await db.fetch("SELECT outcome, error FROM fetch_log WHERE kind = 'feed'")
    assert [r["outcome"] for r in logged] == ["failed"] and "CPU limit" in logged[0]["error"]


@pytest.mark.parametrize(
    ("limits", "named"),
    [
        (ParseLimits(memory_mb=96, timeout_s=120), "memory limit of 96 MiB"),
        (ParseLimits(timeout_s=0.2), "longer than the limit of 0.2 s"),
    ],
    ids=["memory", "wall-clock"],
)
async def test_a_sitemap_over_a_limit_fails_and_backs_off(
    db: Database, client: SafeClient, local_site: LocalSite, limits: ParseLimits, named: str
) -> None:
    local_site.serve(
        "/sitemap.xml.gz", empty_elements_sitemap(100 * 1024 * 1024), content_type="x/gzip"
    )
    source = await SourceRepository(db).add("big", sitemap_url=local_site.url("/sitemap.xml.gz"))
    policy = replace(POLICY, parse=limits)
    async with ParsePool(limits) as parser:
        poller = Poller(db, client, policy, parser=parser)
        [summary] = await poller.run_once(now=T0)
        assert not summary.ok and named in (summary.error or "")
        after = await state(db, source)
        assert after["sitemap_consecutive_errors"] == 1
        assert after["sitemap_next_poll_at"] > T0 + timedelta(minutes=1)
        assert await poller.run_once(now=T0 + timedelta(minutes=1)) == []
    assert len(local_site.hits("/sitemap.xml.gz")) == 1


async def test_the_poll_budget_stops_reading_files(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    serve_hostile(local_site)
    source = await SourceRepository(db).add("s", sitemap_url=local_site.url("/index.xml"))
    policy = replace(POLICY, max_poll_elements=MAX_ELEMENTS // 2)
    [summary] = await Poller(db, client, policy).run_once(now=T0)
    assert summary.ok
    error = (await state(db, source))["sitemap_last_error"] or ""
    assert "elements left in the poll" in error
    assert "stopped at the poll's budget" in error and "1 files not read" in error
    assert local_site.hits("/big-2.xml.gz") == []


async def test_stopping_the_poller_kills_the_parse_in_flight(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    local_site.serve("/feed.xml", malformed_feed(4 * 1024 * 1024), content_type="text/xml")
    source = await SourceRepository(db).add("feed", feed_url=local_site.url("/feed.xml"))
    stop = asyncio.Event()
    async with WatchedPool(ParseLimits(timeout_s=600, cpu_s=600)) as parser:
        poller = Poller(db, client, replace(POLICY, tick_s=600), parser=parser)
        running = asyncio.create_task(poller.run_forever(stop))
        await wait_until(lambda: parser.in_flight and parser.pids, what="a parse in flight")
        [pid] = parser.pids
        stop.set()
        await asyncio.wait_for(running, 30)  # a deadline: the parse alone takes minutes
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped
    after = await state(db, source)
    # cancelled, not failed: the lease is given back and nothing is charged to the source
    assert after["poll_lease_owner"] is None and after["consecutive_errors"] == 0


async def test_the_parse_processes_start_with_the_registered_parsers_imported() -> None:
    """The core names no parser of the poller: the poller registers them in the
    frontier.parse_preload entry-point group, and the fork server imports them once."""
    async with ParsePool(ParseLimits()) as pool:
        loaded = await pool.run(modules_loaded, "poller.")
    assert {"poller.feed_parse", "poller.sitemap_parse", "poller.wordpress_parse"} <= set(loaded)
