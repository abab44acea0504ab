"""WebSub push end to end (issue 32 item 5) against a real PostgreSQL, the API served by
uvicorn on 127.0.0.1 (the callback), a local site whose feed declares a hub, and a hub
written for the tests after the W3C Recommendation (tests/websub_hub.py): the poller
subscribes, the hub verifies the intent at the callback and pushes a new entry, which is
submitted at once and stored by a fetcher; forged or unsigned notifications are answered
and ignored; intents the poller did not ask are refused; a feed that stops declaring its
hub, or a removed source, is unsubscribed; an active subscription's feed is polled at the
fallback interval."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
import uvicorn

from frontier.api.app import create_app
from frontier.api.server import uvicorn_config
from frontier.clock import utcnow
from frontier.db import Database
from frontier.parse_pool import ParsePool
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.settings import Settings
from frontier.sources import Source, SourceRepository
from frontier.websub import WebSubRepository
from poller.policy import PollPolicy, WebSubPolicy
from poller.scheduler import Poller
from poller.websub_push import WebSubLoop
from tests.conditions import wait_until
from tests.fetch_harness import UA, article, fetcher_for, frontier_row
from tests.local_site import LocalSite
from tests.websub_hub import LocalHub, running_hub

ATOM = "application/atom+xml"
FALLBACK_S = 6 * 3600.0


@dataclass
class Served:
    url: str  # the API's base URL, FRONTIER_PUBLIC_URL


@asynccontextmanager
async def serving(db: Database, dsn: str, home: Path) -> AsyncIterator[Served]:
    """The API over `db` (settings from `dsn`) on a socket of 127.0.0.1, whose URL is its
    FRONTIER_PUBLIC_URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    settings = Settings.load(
        database_url=dsn, home=home, public_url=url, websub_max_bytes=64 * 1024, _env_file=None
    )
    server = uvicorn.Server(uvicorn_config(create_app(settings, db), settings))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield Served(url)
    finally:
        server.should_exit = True
        await task
        sock.close()


@pytest.fixture
async def served(db: Database, fresh_dsn: str, tmp_path: Path) -> AsyncIterator[Served]:
    async with serving(db, fresh_dsn, tmp_path) as running:
        yield running


@pytest.fixture
async def hub() -> AsyncIterator[LocalHub]:
    async with running_hub() as running:
        yield running


@pytest.fixture
async def client() -> AsyncIterator[SafeClient]:
    async with SafeClient(HttpLimits(UA, allow_private_networks=True)) as safe:
        yield safe


@pytest.fixture
async def parser() -> AsyncIterator[ParsePool]:
    async with ParsePool() as pool:
        yield pool


@dataclass
class Loops:
    poller: Poller
    push: WebSubLoop


@pytest.fixture
def loops(db: Database, served: Served, client: SafeClient, parser: ParsePool) -> Loops:
    """The poller and its WebSub loop, as `frontier poll` runs them, over `db`."""
    policy = policy_for(served)
    return Loops(
        Poller(db, client, policy, parser=parser), WebSubLoop(db, client, policy, None, parser)
    )


def policy_for(served: Served) -> PollPolicy:
    websub = WebSubPolicy(public_url=served.url, poll_s=FALLBACK_S, tick_s=60.0)
    return PollPolicy(concurrency=4, per_host=2, lease_s=60, websub=websub)


def atom(site: LocalSite, *paths: str, hub: str | None = None, self_url: str | None = None) -> str:
    links = f'<link rel="hub" href="{hub}"/>' if hub else ""
    links += f'<link rel="self" href="{self_url}"/>' if self_url else ""
    entries = "".join(
        f"<entry><title>Story {p}</title><id>{site.url(p)}</id>"
        f'<link href="{site.url(p)}"/><updated>2026-03-01T00:00:00Z</updated></entry>'
        for p in paths
    )
    return (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>'
        f"<id>urn:t</id><updated>2026-03-01T00:00:00Z</updated>{links}{entries}</feed>"
    )


async def subscription(db: Database, source: Source) -> dict | None:
    row = await db.fetchrow("SELECT * FROM websub_subscriptions WHERE source_id = $1", source.id)
    return dict(row) if row is not None else None


async def feed_source(db: Database, site: LocalSite, hub: LocalHub, name: str) -> Source:
    """A source whose feed at /{name}.xml declares `hub`, with its entry /{name}/1."""
    feed_url = site.url(f"/{name}.xml")
    site.serve(
        f"/{name}.xml", atom(site, f"/{name}/1", hub=hub.url, self_url=feed_url), content_type=ATOM
    )
    return await SourceRepository(db).add(name, feed_url=feed_url)


async def subscribed(loops: Loops, hub: LocalHub, *sources: Source) -> None:
    """Poll, send the subscription requests, and wait for the hub to have verified them."""
    await loops.poller.run_once()
    await loops.push.run_once()
    topics = {s.feed_url for s in sources}
    await wait_until(
        lambda: topics <= {s.topic for s in hub.subscriptions.values()},
        deadline_s=60,
        what="the hub verified the subscriptions",
    )


async def test_a_hub_pushes_an_entry_that_is_fetched_within_seconds(
    db: Database,
    served: Served,
    hub: LocalHub,
    local_site: LocalSite,
    loops: Loops,
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    for path in ("/news/1", "/news/2"):
        local_site.serve(path, article(f"story {path}"))
    source = await feed_source(db, local_site, hub, "news")
    poller, push = loops.poller, loops.push

    [polled] = await poller.run_once()
    assert polled.items_new == 1
    stop = asyncio.Event()
    running = asyncio.create_task(push.run_forever(stop))  # wakes on NOTIFY (its tick: 60 s)
    try:
        await wait_until(lambda: hub.subscriptions, deadline_s=60, what="a verified subscription")
        row = await subscription(db, source)
        assert row is not None
        assert (row["state"], row["topic"], row["hub"]) == ("active", source.feed_url, hub.url)
        [asked] = hub.requests
        assert asked["hub.callback"] == f"{served.url}/websub/{row['id']}"
        assert asked["hub.secret"] == row["secret"] and len(row["secret"]) >= 32
        assert row["lease_until"] > utcnow() + timedelta(hours=23)  # the hub's day, not 10 asked

        pushed = atom(local_site, "/news/2", "/news/1", hub=hub.url, self_url=source.feed_url)
        assert await hub.publish(source.feed_url or "", pushed.encode()) == [202]
        queued = await wait_until(
            lambda: db.fetchval(
                "SELECT origin FROM url_frontier WHERE url = $1", local_site.url("/news/2")
            ),
            deadline_s=30,
            what="the pushed entry in the frontier",
        )
    finally:
        stop.set()
        await running
    assert queued == "feed"
    assert len(local_site.hits("/news.xml")) == 1  # pushed, not polled
    async with fetcher_for(db) as fetcher:

        async def fetched() -> bool:  # one URL of a host per batch: /news/1's turn first
            await fetcher.run_once()
            return (await frontier_row(db, local_site.url("/news/2")))["status"] == "fetched"

        await wait_until(fetched, deadline_s=30, what="the pushed entry fetched")
    assert await db.fetchval(
        "SELECT count(*) FROM raw_content WHERE url = $1", local_site.url("/news/2")
    )
    row = await subscription(db, source)
    assert row is not None and row["notifications"] == 1 and row["last_notified_at"] is not None
    assert await db.fetchval("SELECT count(*) FROM websub_notifications") == 0  # applied


async def test_a_notification_without_its_signature_is_answered_and_ignored(
    db: Database,
    hub: LocalHub,
    local_site: LocalSite,
    loops: Loops,
) -> None:
    source = await feed_source(db, local_site, hub, "signed")
    push = loops.push
    await subscribed(loops, hub, source)
    topic = source.feed_url or ""
    body = atom(local_site, "/signed/2", hub=hub.url, self_url=topic).encode()

    assert await hub.publish(topic, body, secret_override="not-the-secret") == [202]
    assert await hub.publish(topic, body, sign=False) == [202]
    assert await db.fetchval("SELECT count(*) FROM websub_notifications") == 0
    row = await subscription(db, source)
    assert row is not None and (row["bad_signatures"], row["notifications"]) == (2, 0)
    assert row["last_error"] == "no X-Hub-Signature"
    await push.run_once()
    assert (
        await db.fetchval(
            "SELECT count(*) FROM url_frontier WHERE url = $1", local_site.url("/signed/2")
        )
        == 0
    )

    assert await hub.publish(topic, b"<html>not a feed</html>") == [202]  # signed, unusable
    refused = await push.run_once()
    assert (refused.notifications, refused.refused, refused.submitted) == (1, 1, 0)
    assert await db.fetchval("SELECT count(*) FROM websub_notifications") == 0

    await db.execute(  # the source's filters hold for a push as for a poll
        """UPDATE sources SET url_filters = '{"exclude": ["/skipped/"]}' WHERE id = $1""",
        source.id,
    )
    real = atom(local_site, "/signed/2", "/signed/skipped/3", hub=hub.url, self_url=topic)
    assert await hub.publish(topic, real.encode()) == [202]
    summary = await push.run_once()
    assert (summary.notifications, summary.submitted, summary.refused) == (1, 1, 0)
    queued = {r["url"] for r in await db.fetch("SELECT url FROM url_frontier")}
    assert local_site.url("/signed/2") in queued
    assert local_site.url("/signed/skipped/3") not in queued


async def test_the_callback_verifies_only_what_the_poller_asked(
    db: Database,
    served: Served,
    hub: LocalHub,
    local_site: LocalSite,
    loops: Loops,
) -> None:
    source = await feed_source(db, local_site, hub, "asked")
    await subscribed(loops, hub, source)
    row = await subscription(db, source)
    assert row is not None
    callback = f"{served.url}/websub/{row['id']}"
    other = f"{served.url}/websub/00000000-0000-4000-8000-000000000000"
    query = {"hub.mode": "subscribe", "hub.challenge": "c1", "hub.lease_seconds": "60"}
    async with httpx.AsyncClient() as api:
        wrong_topic = await api.get(callback, params={**query, "hub.topic": "http://x.test/f"})
        unknown = await api.get(other, params={**query, "hub.topic": source.feed_url})
        unsubscribe = await api.get(
            callback, params={**query, "hub.mode": "unsubscribe", "hub.topic": source.feed_url}
        )
        held = await api.get(  # a lease past any date: held to a year
            callback, params={**query, "hub.topic": source.feed_url, "hub.lease_seconds": "9" * 30}
        )
        gone = await api.post(other, content=b"<feed/>")
        too_large = await api.post(callback, content=b"x" * (64 * 1024 + 1))
    assert [r.status_code for r in (wrong_topic, unknown, unsubscribe)] == [404, 404, 404]
    assert "c1" not in wrong_topic.text + unknown.text + unsubscribe.text
    assert (gone.status_code, too_large.status_code) == (410, 413)
    assert (held.status_code, held.text) == (200, "c1")
    row = await subscription(db, source)
    assert row is not None and row["lease_until"] > utcnow() + timedelta(days=365)

    assert await hub.deny(callback, source.feed_url or "", "not on this hub") == 200
    row = await subscription(db, source)
    assert row is not None and row["state"] == "denied"
    assert row["last_error"] == "denied by the hub: not on this hub"


async def test_a_feed_without_its_hub_and_a_removed_source_are_unsubscribed(
    db: Database,
    hub: LocalHub,
    local_site: LocalSite,
    loops: Loops,
) -> None:
    kept, dropped, removed = [
        await feed_source(db, local_site, hub, name) for name in ("kept", "dropped", "removed")
    ]
    poller, push = loops.poller, loops.push
    await subscribed(loops, hub, kept, dropped, removed)
    local_site.serve("/dropped.xml", atom(local_site, "/dropped/1"), content_type=ATOM)
    await SourceRepository(db).remove("removed")

    later = utcnow() + timedelta(seconds=2 * FALLBACK_S)  # past the fallback poll
    polled = await poller.run_once(now=later)
    assert sorted(s.source for s in polled) == ["dropped", "kept"]
    await push.run_once(now=later)
    await wait_until(
        lambda: {s.topic for s in hub.subscriptions.values()} == {kept.feed_url},
        deadline_s=60,
        what="the hub verified both unsubscriptions",
    )
    unsubscribed = [r for r in hub.requests if r["hub.mode"] == "unsubscribe"]
    assert sorted(r["hub.topic"] for r in unsubscribed) == sorted(
        [dropped.feed_url, removed.feed_url]
    )
    assert all("hub.secret" not in r for r in unsubscribed)
    rows = await db.fetch("SELECT source_id, state FROM websub_subscriptions")
    assert [(r["source_id"], r["state"]) for r in rows] == [(kept.id, "active")]


async def test_a_feed_that_moves_to_another_hub_is_unsubscribed_from_the_old_one(
    db: Database, hub: LocalHub, local_site: LocalSite, loops: Loops
) -> None:
    source = await feed_source(db, local_site, hub, "moving")
    await subscribed(loops, hub, source)
    [old] = await db.fetch("SELECT id, secret FROM websub_subscriptions")
    async with running_hub() as other:
        feed = atom(local_site, "/moving/1", hub=other.url, self_url=source.feed_url)
        local_site.serve("/moving.xml", feed, content_type=ATOM)
        later = utcnow() + timedelta(seconds=2 * FALLBACK_S)  # past the fallback poll
        await loops.poller.run_once(now=later)
        await loops.push.run_once(now=later)
        await wait_until(
            lambda: not hub.subscriptions and other.subscriptions,
            deadline_s=60,
            what="the old hub's unsubscription and the new hub's subscription verified",
        )
        [(_, topic)] = other.subscriptions
        assert topic == source.feed_url
        [left] = [r for r in hub.requests if r["hub.mode"] == "unsubscribe"]
        assert left["hub.callback"].endswith(f"/websub/{old['id']}")  # the old callback
        [row] = await db.fetch("SELECT * FROM websub_subscriptions")
        assert (row["hub"], row["state"]) == (other.url, "active")
        assert row["id"] != old["id"] and row["secret"] != old["secret"]
    # A feed naming a new hub at every poll, to hubs that never answer: two rows, not one
    # more a poll (the one asked, and the last one being unsubscribed).
    repository = WebSubRepository(db)
    for n in range(5):
        await repository.declared(source.id, f"http://127.0.0.1:9/hub{n}", source.feed_url or "")
    rows = await db.fetch("SELECT hub, state FROM websub_subscriptions ORDER BY state")
    assert [(r["hub"], r["state"]) for r in rows] == [
        ("http://127.0.0.1:9/hub4", "requested"),
        ("http://127.0.0.1:9/hub3", "unsubscribing"),
    ]


async def test_an_active_subscription_moves_its_feed_to_the_fallback_interval(
    db: Database,
    hub: LocalHub,
    local_site: LocalSite,
    loops: Loops,
) -> None:
    source = await feed_source(db, local_site, hub, "fallback")
    await subscribed(loops, hub, source)
    first = await db.fetchval("SELECT next_poll_at FROM feed_state WHERE source_id = $1", source.id)
    assert first < utcnow() + timedelta(minutes=2 * source.feed_poll_interval_minutes)

    at = utcnow() + timedelta(minutes=2 * source.feed_poll_interval_minutes)
    [polled] = await loops.poller.run_once(now=at)
    assert polled.ok
    after = await db.fetchval("SELECT next_poll_at FROM feed_state WHERE source_id = $1", source.id)
    assert after >= at + timedelta(seconds=FALLBACK_S / 2)  # the first slot of the fallback
    assert len(hub.requests) == 1  # an active subscription is not asked again


async def test_a_subscription_is_renewed_before_its_lease_ends(
    db: Database, local_site: LocalSite, loops: Loops
) -> None:
    async with running_hub() as short:
        short.lease_seconds = 600
        source = await feed_source(db, local_site, short, "renewed")
        push = loops.push
        await subscribed(loops, short, source)
        assert (await push.run_once()).requests == 0  # 600 s left: not yet
        summary = await push.run_once(now=utcnow() + timedelta(seconds=301))  # half the lease
        assert summary.requests == 1
        await wait_until(lambda: len(short.verifications) == 2, deadline_s=60, what="renewal")
    assert [r["hub.mode"] for r in short.requests] == ["subscribe", "subscribe"]
    assert short.requests[0]["hub.secret"] == short.requests[1]["hub.secret"]
    row = await subscription(db, source)
    assert row is not None and row["state"] == "active"
