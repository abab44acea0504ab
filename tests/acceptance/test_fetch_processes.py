"""Fetch processes (`python -m frontier fetch`) against real local sites: politeness holds
across two processes, a SIGKILLed process loses nothing and holds its hosts no longer than
its lease, SIGTERM leaves nothing fetching."""

from __future__ import annotations

import asyncio
import itertools
import signal
from contextlib import AbstractAsyncContextManager
from datetime import timedelta
from pathlib import Path

from aiohttp import web

from frontier.db import Database
from frontier.politeness_key import KeyMode, KeyRepository
from frontier.queue import QueueRepository
from frontier.queue_values import QueuePolicy
from tests.fetch_harness import article, fetcher_for, submit
from tests.local_site import LocalSite
from tests.processes import frontier_process

DEADLINE_S = 60.0


def fetch_process(
    dsn: str, tmp_path: Path, *args: str, **env: str
) -> AbstractAsyncContextManager[asyncio.subprocess.Process]:
    return frontier_process(dsn, tmp_path, "fetch", *args, **env)


async def sites(count: int) -> list[LocalSite]:
    return [await LocalSite(address=f"127.0.0.{10 + i}").start() for i in range(count)]


async def test_politeness_holds_across_two_processes(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    delay_ms = 400
    hosts = await sites(2)
    try:
        for site in hosts:
            for i in range(5):
                site.serve(f"/p{i}", article(f"{site.address} page {i}", word=f"w{i}"))
            await submit(db, *(site.url(f"/p{i}") for i in range(5)), delay_ms=delay_ms)
        async with (
            fetch_process(fresh_dsn, tmp_path, "--until-idle", "--workers", "4") as one,
            fetch_process(fresh_dsn, tmp_path, "--until-idle", "--workers", "4") as two,
        ):
            await asyncio.wait_for(asyncio.gather(one.wait(), two.wait()), DEADLINE_S)
            assert (one.returncode, two.returncode) == (0, 0)
        for site in hosts:
            answers = sorted(site.answers, key=lambda answered: answered.request.at)
            assert len(answers) == 6  # robots.txt + 5 pages
            # Each request arrived the delay after the previous answer was written.
            gaps = [b.request.at - a.at for a, b in itertools.pairwise(answers)]
            assert min(gaps) >= delay_ms / 1000, (site.address, gaps)
        statuses = await db.fetch("SELECT status, count(*) FROM url_frontier GROUP BY status")
        assert {r["status"]: r["count"] for r in statuses} == {"fetched": 10}
    finally:
        for site in hosts:
            await site.stop()


def blocking_site(
    site: LocalSite, release: asyncio.Event, arrived: asyncio.Event, wanted: int, seen: list[str]
) -> None:
    """Pages answer only once `release` is set; `arrived` is set once `wanted` page requests
    (over all sites sharing `seen`) are waiting."""

    async def page(request: web.Request) -> web.StreamResponse:
        seen.append(request.path)
        if len(seen) >= wanted:
            arrived.set()
        await release.wait()
        body = article(f"page {request.host}{request.path}", word=request.path.strip("/"))
        return web.Response(text=body, content_type="text/html")

    for i in range(20):
        site.route(f"/p{i}", page)


async def test_sigkill_mid_batch_loses_nothing_and_duplicates_nothing(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    hosts = await sites(4)
    release, arrived = asyncio.Event(), asyncio.Event()
    seen: list[str] = []
    try:
        urls = []
        for site in hosts:
            blocking_site(site, release, arrived, 6, seen)
            urls += [site.url(f"/p{i}") for i in range(5)]
        await submit(db, *urls)
        async with fetch_process(
            fresh_dsn, tmp_path, "--workers", "8", FRONTIER_LEASE_SECONDS="30"
        ) as process:
            await asyncio.wait_for(arrived.wait(), DEADLINE_S)
            process.send_signal(signal.SIGKILL)
            await asyncio.wait_for(process.wait(), DEADLINE_S)
        fetching = await db.fetchval("SELECT count(*) FROM url_frontier WHERE status = 'fetching'")
        assert fetching >= 6
        release.set()
        queue = QueueRepository(db, QueuePolicy(default_delay_ms=0, max_retries=3))
        # the lease expires (as if 30 s had passed), then the reaper runs
        await db.execute(
            "UPDATE url_frontier SET lease_until = now() - interval '1 second' "
            "WHERE status = 'fetching'"
        )
        reaped = await queue.reap()
        assert reaped.returned == fetching
        await db.execute("UPDATE host_state SET lease_owner = NULL, lease_until = NULL")
        async with fetcher_for(db, max_retries=3) as fetcher:
            await asyncio.wait_for(fetcher.run(until_idle=True), DEADLINE_S)
        rows = await db.fetch("SELECT status, count(*) FROM url_frontier GROUP BY status")
        assert {r["status"]: r["count"] for r in rows} == {"fetched": len(urls)}
        assert await db.fetchval("SELECT count(*) FROM raw_content") == len(urls)
        hashes = await db.fetchval("SELECT count(DISTINCT content_hash) FROM raw_content")
        assert hashes == len(urls)
        ok = await db.fetchval(
            "SELECT count(*) FROM fetch_log WHERE kind = 'page' AND outcome = 'ok'"
        )
        assert ok == len(urls)  # each URL completed as fetched exactly once
    finally:
        release.set()
        for site in hosts:
            await site.stop()


async def test_a_sigkilled_fetcher_holds_its_hosts_no_longer_than_its_lease(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    hosts = await sites(3)
    release, arrived = asyncio.Event(), asyncio.Event()
    seen: list[str] = []
    lease_s = 30
    try:
        urls = []
        for site in hosts:
            blocking_site(site, release, arrived, len(hosts), seen)
            urls += [site.url(f"/p{i}") for i in range(2)]
        await submit(db, *urls, delay_ms=200)  # a delay: each claim holds its host
        async with fetch_process(
            fresh_dsn, tmp_path, "--workers", "8", FRONTIER_LEASE_SECONDS=str(lease_s)
        ) as process:
            await asyncio.wait_for(arrived.wait(), DEADLINE_S)  # a request on every host
            process.send_signal(signal.SIGKILL)
            await asyncio.wait_for(process.wait(), DEADLINE_S)
        killed_at = await db.fetchval("SELECT now()")
        held = await db.fetch("SELECT host, lease_owner, lease_until FROM host_state")
        assert len(held) == len(hosts) and all(r["lease_owner"] for r in held), held
        release.set()
        queue = QueueRepository(db, QueuePolicy(default_delay_ms=200, lease_seconds=lease_s))
        # Until the lease ends, no one may send those hosts a request; then everyone may.
        last = max(r["lease_until"] for r in held)
        assert last <= killed_at + timedelta(seconds=lease_s)
        before = min(r["lease_until"] for r in held) - timedelta(milliseconds=1)
        assert await queue.claim("another", 10, now=before) == []
        await queue.reap(now=last)  # the URLs' leases end with the hosts'
        claims = await queue.claim("another", 10, now=last)
        assert sorted(c.host for c in claims) == sorted(f"{s.address}:{s.port}" for s in hosts)
        await queue.release("another", claims, now=last)
        # The rest of the crawl, as if the lease had passed: nothing lost, nothing twice.
        await db.execute(
            "UPDATE host_state SET next_allowed_at = now(), lease_owner = NULL, lease_until = NULL"
        )
        await db.execute("UPDATE url_frontier SET next_fetch_at = now() WHERE status = 'pending'")
        await db.execute(
            "UPDATE host_state SET pending_due_at = now() WHERE pending_due_at IS NOT NULL"
        )
        async with fetcher_for(db, max_retries=3) as fetcher:
            await asyncio.wait_for(fetcher.run(until_idle=True), DEADLINE_S)
        rows = await db.fetch("SELECT status, count(*) FROM url_frontier GROUP BY status")
        assert {r["status"]: r["count"] for r in rows} == {"fetched": len(urls)}
        assert await db.fetchval("SELECT count(*) FROM raw_content") == len(urls)
    finally:
        release.set()
        for site in hosts:
            await site.stop()


async def test_a_sigkilled_fetcher_holds_its_politeness_key_no_longer_than_its_lease(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    """Two hosts of one key (`ip`: two servers on one address); the fetcher dies holding
    the key with one of them. The key is free once the hold's lease ends (nobody reaps
    it), and the crawl then loses nothing."""
    hosts = [await LocalSite(address="127.0.0.30").start() for _ in range(2)]
    release, arrived = asyncio.Event(), asyncio.Event()
    seen: list[str] = []
    key, lease_s = "ip:127.0.0.30", 30
    try:
        urls = []
        for site in hosts:
            blocking_site(site, release, arrived, 1, seen)
            urls += [site.url(f"/p{i}") for i in range(2)]
        await submit(db, *urls, delay_ms=200)
        async with fetch_process(
            fresh_dsn,
            tmp_path,
            "--workers",
            "8",
            FRONTIER_LEASE_SECONDS=str(lease_s),
            FRONTIER_POLITENESS_KEY="ip",
        ) as process:
            await asyncio.wait_for(arrived.wait(), DEADLINE_S)  # a request in flight
            process.send_signal(signal.SIGKILL)
            await asyncio.wait_for(process.wait(), DEADLINE_S)
        killed_at = await db.fetchval("SELECT now()")
        assert len(seen) == 1  # one request on the key, though two hosts were claimable
        held = await db.fetchrow(
            "SELECT lease_owner, lease_until FROM politeness_keys WHERE key = $1", key
        )
        assert held is not None and held["lease_owner"], held
        assert held["lease_until"] <= killed_at + timedelta(seconds=lease_s)
        release.set()
        # Until the lease ends no one may take the key; from then on anyone may.
        keys = KeyRepository(db)
        before = held["lease_until"] - timedelta(milliseconds=1)
        assert not (await keys.take(key, "another", lease_s=lease_s, now=before)).taken
        assert (await keys.take(key, "another", lease_s=lease_s, now=held["lease_until"])).taken
        await keys.release({key: ("another", 0)}, now=held["lease_until"])
        # The rest of the crawl, as if the lease had passed: nothing lost.
        await db.execute(
            "UPDATE url_frontier SET lease_until = now() - interval '1 second' "
            "WHERE status = 'fetching'"
        )
        await QueueRepository(db, QueuePolicy(default_delay_ms=200)).reap()
        await db.execute(
            "UPDATE host_state SET next_allowed_at = now(), lease_owner = NULL, lease_until = NULL"
        )
        await db.execute("UPDATE politeness_keys SET next_allowed_at = now()")
        async with fetcher_for(db, max_retries=3, politeness_key=KeyMode.IP) as fetcher:
            await asyncio.wait_for(fetcher.run(until_idle=True), DEADLINE_S)
        rows = await db.fetch("SELECT status, count(*) FROM url_frontier GROUP BY status")
        assert {r["status"]: r["count"] for r in rows} == {"fetched": len(urls)}
        assert await db.fetchval("SELECT lease_owner FROM politeness_keys") is None
    finally:
        release.set()
        for site in hosts:
            await site.stop()


async def test_sigterm_leaves_nothing_fetching(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    hosts = await sites(3)
    release, arrived = asyncio.Event(), asyncio.Event()
    seen: list[str] = []
    try:
        urls = []
        for site in hosts:
            blocking_site(site, release, arrived, 3, seen)
            urls += [site.url(f"/p{i}") for i in range(3)]
        await submit(db, *urls)
        async with fetch_process(
            fresh_dsn, tmp_path, "--workers", "6", FRONTIER_FETCH_SHUTDOWN_S="1"
        ) as process:
            await asyncio.wait_for(arrived.wait(), DEADLINE_S)
            assert (
                await db.fetchval("SELECT count(*) FROM url_frontier WHERE status = 'fetching'")
                >= 3
            )
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), DEADLINE_S)
            assert process.returncode == 0
        assert await db.fetchval("SELECT count(*) FROM url_frontier WHERE status = 'fetching'") == 0
        rows = await db.fetch("SELECT retry_count, fetch_count FROM url_frontier")
        assert all(r["retry_count"] == 0 for r in rows)  # released untried, not failed
        leased = await db.fetchval("SELECT count(*) FROM host_state WHERE lease_owner IS NOT NULL")
        assert leased == 0
    finally:
        release.set()
        for site in hosts:
            await site.stop()
