"""The poller against a real PostgreSQL and real local HTTP servers: run_once end to end,
conditional GET, failures and backoff, redirects, 410, Retry-After, the SSRF guard, two
pollers at once, manual fire and its rate limit, and `frontier poll --once`."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pytest
from aiohttp import web

from frontier.db import Database
from frontier.host_slots import HostSlots
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.sources import Source, SourceRepository, UnknownSource
from poller.errors import FireRateLimited
from poller.fire import fire_source
from poller.policy import PollPolicy
from poller.poll_state import PollStateRepository
from poller.poll_summary import PollSummary
from poller.scheduler import Poller
from tests.local_site import LocalSite

T0 = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)  # after any row's default now()
POLICY = PollPolicy(concurrency=4, per_host=2, lease_s=60)


def rss(*links: str, ttl: int | None = None) -> str:
    items = "".join(
        f"<item><title>Story {i}</title><link>{link}</link>"
        f"<description>&lt;p&gt;Body of &lt;b&gt;story&lt;/b&gt; {i}&lt;/p&gt;</description>"
        f"<pubDate>Sun, 01 Mar 2026 0{i % 10}:00:00 GMT</pubDate></item>"
        for i, link in enumerate(links)
    )
    ttl_tag = f"<ttl>{ttl}</ttl>" if ttl else ""
    return (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>{ttl_tag}'
        f"{items}</channel></rss>"
    )


@pytest.fixture
async def client() -> AsyncIterator[SafeClient]:
    async with SafeClient(HttpLimits("frontier-test/1", allow_private_networks=True)) as c:
        yield c


async def add(db: Database, name: str, **kwargs: object) -> Source:
    return await SourceRepository(db).add(name, **kwargs)  # type: ignore[arg-type]


async def state(db: Database, source: Source) -> dict:
    record = await db.fetchrow("SELECT * FROM feed_state WHERE source_id = $1", source.id)
    assert record is not None
    return dict(record)


async def frontier_urls(db: Database) -> dict[str, dict]:
    rows = await db.fetch("SELECT url, origin, discovery_meta FROM url_frontier")
    return {r["url"]: dict(r) for r in rows}


async def test_run_once_submits_feed_entries_and_logs_the_poll(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    local_site.serve(
        "/feed.xml",
        rss("/a/1", "/a/2", "/a/1"),
        content_type="application/rss+xml",
        headers={"ETag": '"v1"'},
    )
    source = await add(db, "site", feed_url=local_site.url("/feed.xml"))

    summaries = await Poller(db, client, POLICY).run_once(now=T0)

    assert [(s.source, s.ok, s.items_seen, s.items_new) for s in summaries] == [
        ("site", True, 3, 2)
    ]
    urls = await frontier_urls(db)
    assert set(urls) == {local_site.url("/a/1"), local_site.url("/a/2")}
    meta = urls[local_site.url("/a/1")]["discovery_meta"]
    assert meta["title"] == "Story 0" and meta["summary"] == "Body of story 0"
    assert meta["published_at"] == "2026-03-01T00:00:00+00:00"
    assert urls[local_site.url("/a/1")]["origin"] == "feed"
    row = await state(db, source)
    assert row["last_etag"] == '"v1"' and row["consecutive_errors"] == 0
    assert row["next_poll_at"] > T0 and row["poll_lease_until"] is None
    log = await db.fetch("SELECT * FROM fetch_log WHERE source_id = $1", source.id)
    assert [(r["kind"], r["outcome"], r["items_seen"], r["items_new"]) for r in log] == [
        ("feed", "ok", 3, 2)
    ]
    # Not due any more: nothing is polled again at the same instant.
    assert await Poller(db, client, POLICY).run_once(now=T0) == []


async def test_conditional_get_round_trip_to_a_304(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    body = rss("/x/1").encode()

    async def handler(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(
                status=304,
                headers={"ETag": '"v1"', "Last-Modified": "Mon, 02 Mar 2026 00:00:00 GMT"},
            )
        return web.Response(
            body=body,
            content_type="application/rss+xml",
            headers={"ETag": '"v1"', "Last-Modified": "Sun, 01 Mar 2026 00:00:00 GMT"},
        )

    local_site.route("/feed.xml", handler)
    source = await add(db, "cond", feed_url=local_site.url("/feed.xml"))
    poller = Poller(db, client, POLICY)
    await poller.run_once(now=T0)
    first = await state(db, source)

    summaries = await poller.run_once(now=first["next_poll_at"] + timedelta(seconds=1))

    assert summaries[0].outcome == "not_modified" and summaries[0].ok
    hits = local_site.hits("/feed.xml")
    assert hits[1].headers["If-None-Match"] == '"v1"'
    assert hits[1].headers["If-Modified-Since"] == "Sun, 01 Mar 2026 00:00:00 GMT"
    second = await state(db, source)
    assert second["last_modified"] == "Mon, 02 Mar 2026 00:00:00 GMT"  # stored even on a 304
    assert second["last_polled_at"] > first["last_polled_at"]
    assert second["feed_cursor_at"] == first["feed_cursor_at"]  # a 304 moves timestamps only
    outcomes = await db.fetch("SELECT outcome FROM fetch_log ORDER BY id")
    assert [r["outcome"] for r in outcomes] == ["ok", "not_modified"]


async def test_failures_back_off_and_never_advance_the_cursor(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    local_site.serve(
        "/feed.xml", rss("/ok/1"), content_type="application/rss+xml", headers={"ETag": '"good"'}
    )
    source = await add(db, "flaky", feed_url=local_site.url("/feed.xml"))
    poller = Poller(db, client, POLICY)
    await poller.run_once(now=T0)
    good = await state(db, source)
    local_site.serve("/feed.xml", "oops", status=500)

    at = good["next_poll_at"]
    gaps = []
    for _ in range(3):
        at += timedelta(seconds=1)
        summaries = await poller.run_once(now=at)
        assert summaries[0].ok is False and "HTTP 500" in summaries[0].error
        row = await state(db, source)
        gaps.append((row["next_poll_at"] - at).total_seconds())
        at = row["next_poll_at"]

    assert row["consecutive_errors"] == 3
    assert row["last_etag"] == '"good"' and row["feed_cursor_at"] == good["feed_cursor_at"]
    interval = 15 * 60
    for errors, gap in enumerate(gaps, start=1):
        assert interval * 2**errors * 0.9 <= gap <= interval * 2**errors
    failed = await db.fetch("SELECT outcome, http_status FROM fetch_log WHERE outcome = 'failed'")
    assert [(r["outcome"], r["http_status"]) for r in failed] == [("failed", 500)] * 3


async def test_retry_after_gone_and_permanent_redirect(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    local_site.serve("/busy.xml", "slow down", status=429, headers={"Retry-After": "7200"})
    local_site.serve("/gone.xml", "bye", status=410)
    local_site.redirect("/old.xml", "/new.xml", status=301)
    local_site.serve("/new.xml", rss("/moved/1"), content_type="application/rss+xml")
    busy = await add(db, "busy", feed_url=local_site.url("/busy.xml"), interval_minutes=1)
    gone = await add(db, "gone", feed_url=local_site.url("/gone.xml"))
    moved = await add(db, "moved", feed_url=local_site.url("/old.xml"))

    await Poller(db, client, POLICY).run_once(now=T0)

    assert (await state(db, busy))["next_poll_at"] >= T0 + timedelta(seconds=7200)
    gone_state = await state(db, gone)
    assert "410" in gone_state["disabled_reason"]
    assert (await SourceRepository(db).get("gone")).enabled is False
    assert (await SourceRepository(db).get("moved")).feed_url == local_site.url("/new.xml")
    assert (await state(db, moved))["feed_url"] == local_site.url("/new.xml")
    assert local_site.url("/moved/1") in await frontier_urls(db)
    outcomes = {
        r["url"]: r["outcome"] for r in await db.fetch("SELECT url, outcome FROM fetch_log")
    }
    assert outcomes[local_site.url("/busy.xml")] == "rate_limited"
    assert outcomes[local_site.url("/gone.xml")] == "gone"


async def test_private_addresses_are_refused_unless_allowed(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/feed.xml", rss("/p/1"), content_type="application/rss+xml")
    source = await add(db, "private", feed_url=local_site.url("/feed.xml"))
    async with SafeClient(HttpLimits("frontier-test/1", allow_private_networks=False)) as guarded:
        summaries = await Poller(db, guarded, POLICY).run_once(now=T0)

    assert summaries[0].ok is False and "not a public address" in summaries[0].error
    assert local_site.hits("/feed.xml") == []
    assert (await state(db, source))["consecutive_errors"] == 1
    log = await db.fetchrow("SELECT outcome FROM fetch_log")
    assert log is not None and log["outcome"] == "refused"


async def test_two_pollers_never_poll_one_source_at_once(
    fresh_dsn: str, db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    in_flight: dict[str, int] = {}
    most: dict[str, int] = {}
    per_host_now = 0
    per_host_most = 0
    release = asyncio.Event()

    async def handler(request: web.Request) -> web.Response:
        nonlocal per_host_now, per_host_most
        path = request.path
        in_flight[path] = in_flight.get(path, 0) + 1
        most[path] = max(most.get(path, 0), in_flight[path])
        per_host_now += 1
        per_host_most = max(per_host_most, per_host_now)
        if per_host_now >= 2:
            release.set()
        await asyncio.wait_for(release.wait(), timeout=10)
        in_flight[path] -= 1
        per_host_now -= 1
        return web.Response(text=rss(f"{path}/1"), content_type="application/rss+xml")

    for i in range(8):
        local_site.route(f"/f{i}.xml", handler)
        await add(db, f"s{i}", feed_url=local_site.url(f"/f{i}.xml"))
    other = await Database.connect(fresh_dsn, max_size=4)
    try:
        a, b = Poller(db, client, POLICY), Poller(other, client, POLICY)
        results = await asyncio.gather(a.run_once(now=T0), b.run_once(now=T0))
    finally:
        await other.close()

    polled = [s.source for r in results for s in r]
    assert sorted(polled) == sorted(f"s{i}" for i in range(8))  # each exactly once
    assert max(most.values()) == 1
    assert per_host_most <= POLICY.per_host
    assert len(local_site.requests) == 8


async def test_a_claim_counts_a_hosts_sources_together_whatever_their_urls_look_like(
    db: Database,
) -> None:
    """The claim's poll key is the URL's host (and port), whatever the scheme, path, query
    or fragment (claim_due reads it with string functions, not a regular expression)."""
    urls = [
        "http://a.example/feed",
        "https://a.example/other.xml",
        "http://a.example?feed=2",
        "http://b.example:8080/f",
        "https://b.example:8080/g#x",
        "http://c.example",
    ]
    for n, url in enumerate(urls):
        await add(db, f"shaped-{n}", feed_url=url)
    claimed = await PollStateRepository(db).claim_due("p", 10, lease_s=60, per_key=1, now=T0)
    assert sorted(urlsplit(s.feed_url or "").netloc for s, _ in claimed) == [
        "a.example",
        "b.example:8080",
        "c.example",
    ]


async def test_fire_dry_run_writes_nothing_and_real_fires_are_rate_limited(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    local_site.serve("/feed.xml", rss("/f/1", "/f/2"), content_type="application/rss+xml")
    source = await add(db, "firing", feed_url=local_site.url("/feed.xml"))

    dry = await fire_source(db, client, source.id, dry_run=True, now=T0)
    again = await fire_source(db, client, source.id, dry_run=True, now=T0)

    assert dry.as_json()["items_new"] == 0 and again.items_seen == 2
    assert [e["url"] for e in dry.as_json()["entries"]] == [
        local_site.url("/f/1"),
        local_site.url("/f/2"),
    ]
    assert await frontier_urls(db) == {}
    assert await db.fetchval("SELECT count(*) FROM fetch_log") == 0
    assert (await state(db, source))["last_fired_at"] is None

    real = await fire_source(db, client, source.id, dry_run=False, now=T0)
    assert real.items_new == 2 and real.error is None
    with pytest.raises(FireRateLimited) as refused:
        await fire_source(db, client, source.id, dry_run=False, now=T0 + timedelta(seconds=20))
    assert 39 <= refused.value.retry_after_s <= 40
    later = await fire_source(db, client, source.id, dry_run=False, now=T0 + timedelta(seconds=61))
    assert later.error is None
    with pytest.raises(UnknownSource):
        await fire_source(db, client, uuid.UUID(int=1), dry_run=True)


async def test_manual_source_is_never_polled_and_bad_sources_do_not_stop_others(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    local_site.serve("/good.xml", rss("/g/1"), content_type="application/rss+xml")
    local_site.serve("/bad.xml", "<html><body>not a feed</body></html>")
    await add(db, "good", feed_url=local_site.url("/good.xml"))
    await add(db, "bad", feed_url=local_site.url("/bad.xml"))

    summaries = {s.source: s for s in await Poller(db, client, POLICY).run_once(now=T0)}

    assert set(summaries) == {"good", "bad"}
    assert summaries["good"].ok and summaries["good"].items_new == 1
    assert not summaries["bad"].ok and "not a feed" in summaries["bad"].error


async def test_cli_poll_once_json_exits_1_when_a_source_failed(
    settings, db: Database, local_site: LocalSite
) -> None:
    import json
    import os
    import sys

    local_site.serve("/good.xml", rss("/c/1"), content_type="application/rss+xml")
    local_site.serve("/down.xml", "down", status=502)
    await add(db, "good", feed_url=local_site.url("/good.xml"))
    await add(db, "down", feed_url=local_site.url("/down.xml"))
    env = {
        **os.environ,
        "FRONTIER_DATABASE_URL": settings.database_url,
        "FRONTIER_ALLOW_PRIVATE_NETWORKS": "true",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "frontier",
        "poll",
        "--once",
        "--json",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)

    assert process.returncode == 1, err.decode()
    rows = {r["source"]: r for r in json.loads(out)}
    assert rows["good"]["ok"] is True and rows["good"]["items_new"] == 1
    assert rows["down"]["ok"] is False and rows["down"]["error"] == "HTTP 502"
    assert set(rows["good"]) >= {"url", "ok", "error", "items_seen", "items_new"}


async def test_run_forever_hands_each_ticks_summaries_to_on_polled(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    local_site.serve("/feed.xml", rss("/f/1"), content_type="application/rss+xml")
    await add(db, "site", feed_url=local_site.url("/feed.xml"))
    stop = asyncio.Event()
    ticks: list[list[PollSummary]] = []

    def on_polled(summaries: list[PollSummary]) -> None:
        ticks.append(summaries)
        stop.set()  # one tick is enough; run_forever returns

    await asyncio.wait_for(Poller(db, client, POLICY).run_forever(stop, on_polled=on_polled), 30)

    assert [[(s.source, s.ok, s.items_new) for s in tick] for tick in ticks] == [
        [("site", True, 1)]
    ]
    row = ticks[0][0].as_json()  # a `frontier poll --once --json` row, keys in today's order
    assert list(row) == ["source", "url", "ok", "error", "items_seen", "items_new", "outcome"]
    assert row == {
        "source": "site",
        "url": local_site.url("/feed.xml"),
        "ok": True,
        "error": None,
        "items_seen": 1,
        "items_new": 1,
        "outcome": "ok",
    }


async def test_run_forever_reports_a_failed_tick_and_keeps_going(
    db: Database, client: SafeClient
) -> None:
    poller = Poller(db, client, PollPolicy(tick_s=0.01))  # the loop's interval, not a wait
    stop = asyncio.Event()
    failures: list[Exception] = []

    async def broken(*, now: datetime | None = None) -> list[PollSummary]:
        raise RuntimeError("bad statement")

    def on_failed(exc: Exception) -> None:
        failures.append(exc)
        if len(failures) == 2:
            stop.set()

    poller.run_once = broken  # type: ignore[method-assign]  # a tick that always fails
    await asyncio.wait_for(poller.run_forever(stop, on_failed=on_failed), 30)

    assert [str(exc) for exc in failures] == ["bad statement", "bad statement"]


async def test_a_host_backing_off_fails_the_poll_without_a_request(
    db: Database, local_site: LocalSite
) -> None:
    """The poller holds each host as the fetchers do (frontier/host_slots.py); a host that
    backs off for longer than it waits is not requested, and the poll fails and backs off
    like any other transient failure (not a crash)."""
    local_site.serve("/feed.xml", rss("/ok/1"), content_type="application/rss+xml")
    source = await add(db, "walled", feed_url=local_site.url("/feed.xml"))
    await db.execute(
        "INSERT INTO host_state (host, backoff_until) VALUES ($1, now() + interval '1 hour')",
        f"{local_site.address}:{local_site.port}",
    )
    slots = HostSlots(db, "poller-test", new_host_delay_ms=0, lease_s=60)
    limits = HttpLimits("frontier-test/1", allow_private_networks=True)
    async with SafeClient(limits, slots) as client:
        summaries = await Poller(db, client, POLICY).run_once(now=T0)
    assert summaries[0].ok is False and "backs off" in (summaries[0].error or "")
    assert local_site.requests == []
    row = await state(db, source)
    assert row["consecutive_errors"] == 1 and row["next_poll_at"] > T0
    logged = await db.fetch("SELECT kind, outcome FROM fetch_log")
    assert [(r["kind"], r["outcome"]) for r in logged] == [("feed", "failed")]  # no crash


async def test_run_forever_polls_a_source_when_it_falls_due_not_at_the_next_tick(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    """A tick of an hour: the source that falls due two seconds after the first tick is
    polled then (the loop asks when the next source is due), not an hour later."""
    local_site.serve("/feed.xml", rss("/f/1"), content_type="application/rss+xml")
    source = await add(db, "site", feed_url=local_site.url("/feed.xml"))
    await db.execute(
        "UPDATE feed_state SET next_poll_at = now() + interval '2 seconds', "
        "sitemap_next_poll_at = now() + interval '2 seconds' WHERE source_id = $1",
        source.id,
    )
    stop = asyncio.Event()
    ticks: list[list[PollSummary]] = []

    def on_polled(summaries: list[PollSummary]) -> None:
        ticks.append(summaries)
        if summaries:
            stop.set()

    poller = Poller(db, client, PollPolicy(concurrency=4, per_host=2, lease_s=60, tick_s=3600))
    # the deadline is the test's, far under the tick: the old loop slept the whole hour
    await asyncio.wait_for(poller.run_forever(stop, on_polled=on_polled), 60)
    assert ticks[0] == []  # the first tick found nothing due
    assert [(s.source, s.ok) for s in ticks[-1]] == [("site", True)]
    assert len(local_site.hits("/feed.xml")) == 1


async def test_a_hosts_sources_are_polled_next_evenly_spread_over_their_interval(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    """Each request to a host waits its turn: twelve feeds of one host polled every minute
    are given one slot every 5 s (at most a quarter of that jittered), not phases at
    random, which bunched them up behind each other."""
    sources = []
    for i in range(12):
        local_site.serve(f"/feed/{i}.xml", rss(f"/a/{i}"), content_type="application/rss+xml")
        feed = local_site.url(f"/feed/{i}.xml")
        sources.append(await add(db, f"section-{i}", feed_url=feed, interval_minutes=1))

    summaries = await Poller(db, client, POLICY).run_once(now=T0)

    assert len(summaries) == 12 and all(s.ok for s in summaries)
    polls = sorted([(await state(db, s))["next_poll_at"].timestamp() % 60 for s in sources])
    gaps = [(b - a) % 60 for a, b in zip(polls, [*polls[1:], polls[0]], strict=True)]
    assert min(gaps) >= 5 - 1.25 and max(gaps) <= 5 + 1.25, gaps


async def test_the_same_body_again_without_validators_is_not_parsed_again(
    db: Database, client: SafeClient, local_site: LocalSite
) -> None:
    """A server that sends no ETag nor Last-Modified answers every poll in full: the body
    read last time counts as a 304 (not parsed again), a changed one is read."""
    local_site.serve("/feed.xml", rss("/a/1"), content_type="application/rss+xml")
    source = await add(db, "plain", feed_url=local_site.url("/feed.xml"))
    poller = Poller(db, client, POLICY)
    later = T0 + timedelta(hours=1)

    await poller.run_once(now=T0)
    again = await poller.run_once(now=later)
    local_site.serve("/feed.xml", rss("/a/1", "/a/2"), content_type="application/rss+xml")
    changed = await poller.run_once(now=later + timedelta(hours=1))

    assert [(s.outcome, s.items_new) for s in again] == [("not_modified", 0)]
    assert [(s.outcome, s.items_new) for s in changed] == [("ok", 1)]
    assert set(await frontier_urls(db)) == {local_site.url("/a/1"), local_site.url("/a/2")}
    assert (await state(db, source))["last_body_digest"] is not None
