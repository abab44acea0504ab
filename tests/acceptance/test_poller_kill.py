"""A `frontier poll` process SIGKILLed mid-poll: the poll leases it held expire, a new
poller polls those sources again, and every entry ends in the frontier exactly once.

Three sources on three hosts, polled in one `Poller.run_once()`: A (a feed and a sitemap,
answered at once), B (a feed) and C (a sitemap-only source) whose servers hold the request
open until the test releases them, so the poll is provably in flight when the process dies.

A poll's writes are not one transaction: `poll_source` submits the entries as soon as the
documents are read, and the scheduler writes the new `feed_state` (freeing the lease) and
the `fetch_log` rows later, in a batch, once few enough polls are running. So the kill can
fall between the two; `poll_concurrency` picks where, deterministically:

- 4: A's state is written before the kill (2 polls still running <= 4 // 2);
- 3: A's entries are submitted but its state is not (2 running > 3 // 2): A keeps its
  lease, is polled again after expiry, and its entries are submitted again and deduplicated
  (`ok_no_new`); the first poll's `fetch_log` rows are lost with the process.

The state, the lease release and the `fetch_log` rows are three statements as well, so a
kill between them loses the log rows of a poll whose state was written (observability
only: nothing is lost from the frontier).
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from frontier.db import Database
from frontier.sources import Source, SourceRepository
from tests.conditions import wait_until
from tests.frontier_checks import assert_counters_agree
from tests.local_site import LocalSite
from tests.processes import frontier_process

DEADLINE_S = 60.0
LEASE_S = 12  # FRONTIER_LEASE_SECONDS: the poll lease expires for real, no clock surgery


def rss(*links: str) -> str:
    items = "".join(
        f"<item><title>Story {i}</title><link>{link}</link></item>" for i, link in enumerate(links)
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel>{items}</channel></rss>'


def urlset(*links: str) -> str:
    return "<urlset>" + "".join(f"<url><loc>{link}</loc></url>" for link in links) + "</urlset>"


def held(body: str, content_type: str, arrived: asyncio.Event, release: asyncio.Event) -> Any:
    """A handler that answers only once `release` is set; sets `arrived` on each request."""

    async def handler(_request: web.Request) -> web.StreamResponse:
        arrived.set()
        await release.wait()
        return web.Response(text=body, content_type=content_type)

    return handler


def poll_env(concurrency: int) -> dict[str, str]:
    return {
        "FRONTIER_LEASE_SECONDS": str(LEASE_S),
        "FRONTIER_POLL_TICK_S": "0.5",
        "FRONTIER_POLL_CONCURRENCY": str(concurrency),
        "FRONTIER_SEED_DEFAULT_SOURCES": "false",
    }


async def states(db: Database) -> dict[str, dict[str, Any]]:
    rows = await db.fetch(
        "SELECT s.name, f.*, coalesce(f.poll_lease_until > now(), false) AS leased, "
        "least(f.next_poll_at, f.sitemap_next_poll_at) > now() AS polled, "
        "(SELECT max(at) FROM fetch_log l WHERE l.source_id = s.id) AS logged_at "
        "FROM feed_state f JOIN sources s ON s.id = f.source_id WHERE s.name <> 'manual'"
    )
    return {r["name"]: dict(r) for r in rows}


async def frontier_urls(db: Database) -> dict[str, str]:
    return {r["url"]: r["origin"] for r in await db.fetch("SELECT url, origin FROM url_frontier")}


async def poll_logs(db: Database, source: Source) -> list[tuple[str, str, int, int]]:
    rows = await db.fetch(
        "SELECT kind, outcome, items_seen, items_new FROM fetch_log WHERE source_id = $1 "
        "ORDER BY kind, at",
        source.id,
    )
    return [(r["kind"], r["outcome"], r["items_seen"], r["items_new"]) for r in rows]


@pytest.mark.parametrize("concurrency", [3, 4], ids=["state-unwritten", "state-written"])
async def test_sigkill_mid_poll_repolls_after_the_lease_and_submits_once(
    db: Database, fresh_dsn: str, tmp_path: Path, concurrency: int
) -> None:
    a, b, c = [await LocalSite(address=f"127.0.0.{20 + i}").start() for i in range(3)]
    arrived_b, arrived_c, release = asyncio.Event(), asyncio.Event(), asyncio.Event()
    a_feed = [a.url(f"/a/{i}") for i in range(1, 6)]
    a_sitemap = [a.url(f"/a/{i}") for i in range(4, 9)]  # /a/4 and /a/5 are in both
    b_feed = [b.url(f"/b/{i}") for i in range(1, 5)]
    c_sitemap = [c.url(f"/c/{i}") for i in range(1, 4)]
    try:
        a.serve("/feed.xml", rss(*a_feed), content_type="application/rss+xml")
        a.serve("/sitemap.xml", urlset(*a_sitemap), content_type="application/xml")
        b.route("/feed.xml", held(rss(*b_feed), "application/rss+xml", arrived_b, release))
        c.route("/sitemap.xml", held(urlset(*c_sitemap), "application/xml", arrived_c, release))
        sources = SourceRepository(db)
        src_a = await sources.add(
            "a", feed_url=a.url("/feed.xml"), sitemap_url=a.url("/sitemap.xml")
        )
        src_b = await sources.add("b", feed_url=b.url("/feed.xml"))
        src_c = await sources.add("c", sitemap_url=c.url("/sitemap.xml"))
        a_urls = set(a_feed) | set(a_sitemap)
        a_written = concurrency == 4

        async with frontier_process(fresh_dsn, tmp_path, "poll", **poll_env(concurrency)) as first:
            await asyncio.wait_for(asyncio.gather(arrived_b.wait(), arrived_c.wait()), DEADLINE_S)

            async def a_done() -> bool:
                if a_written:  # the state, then (another statement) the fetch_log rows
                    row = (await states(db))["a"]
                    logged = len(await poll_logs(db, src_a)) == 2
                    return row["poll_lease_owner"] is None and row["polled"] and logged
                return set(await frontier_urls(db)) == a_urls

            await wait_until(a_done, first, deadline_s=DEADLINE_S, what="A's poll applied")
            first.send_signal(signal.SIGKILL)
            await asyncio.wait_for(first.wait(), DEADLINE_S)

        # Right after the kill: B and C are leased to the dead process, nothing of theirs
        # is written; A's entries are in (and, with concurrency 3, A is still leased too).
        after_kill = await states(db)
        still_leased = {"b", "c"} | (set() if a_written else {"a"})
        for name, row in after_kill.items():
            assert row["leased"] is (name in still_leased), (name, row)
            if name in still_leased:
                assert not row["polled"] and row["poll_lease_owner"], (name, row)
        assert set(await frontier_urls(db)) == a_urls
        assert len(await poll_logs(db, src_a)) == (2 if a_written else 0)

        release.set()
        async with frontier_process(fresh_dsn, tmp_path, "poll", **poll_env(concurrency)) as second:

            async def all_polled() -> dict[str, dict[str, Any]] | None:
                now = await states(db)
                done = all(r["poll_lease_owner"] is None and r["polled"] for r in now.values())
                return now if done else None

            final = await wait_until(
                all_polled,
                second,
                deadline_s=DEADLINE_S + LEASE_S,
                what="every source polled again",
            )
            second.send_signal(signal.SIGTERM)
            await asyncio.wait_for(second.wait(), DEADLINE_S)
            assert second.returncode == 0

        for name in still_leased:  # the new poller waited for the lease to expire
            assert final[name]["logged_at"] >= after_kill[name]["poll_lease_until"]
        assert all(r["consecutive_errors"] == 0 for r in final.values())
        assert len(b.hits("/feed.xml")) == len(c.hits("/sitemap.xml")) == 2
        assert len(a.hits("/feed.xml")) == len(a.hits("/sitemap.xml")) == (1 if a_written else 2)

        urls = await frontier_urls(db)
        expected = {u: "feed" for u in a_feed + b_feed}
        expected |= {u: "sitemap" for u in a_sitemap[2:] + c_sitemap}
        assert urls == expected  # each entry once (url_hash is unique: no duplicate rows)
        assert await db.fetchval("SELECT count(*) FROM url_frontier") == len(expected)
        assert await poll_logs(db, src_b) == [("feed", "ok", 4, 4)]
        assert await poll_logs(db, src_c) == [("sitemap", "ok", 3, 3)]
        if a_written:
            assert await poll_logs(db, src_a) == [("feed", "ok", 5, 5), ("sitemap", "ok", 5, 3)]
        else:  # polled again: the same entries, already known; the first logs died unwritten
            assert await poll_logs(db, src_a) == [
                ("feed", "ok_no_new", 5, 0),
                ("sitemap", "ok_no_new", 5, 0),
            ]
        await assert_counters_agree(db)
    finally:
        release.set()
        for site in (a, b, c):
            await site.stop()
