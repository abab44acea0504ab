"""A request goes out within its politeness slot's margin of asking for it, or not at all
(fetcher/politeness.py): the next requester's turn comes the delay and the margin after
the slot was taken, so a request that starts later could reach the host less than the
delay before the next one. And the first page request after robots.txt waits out the
delay from the robots.txt answer, which comes after its request went out, however late."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from fetcher.politeness import LATE, margin_ms
from frontier.db import Database
from frontier.hosts import HostRepository, RequestStart
from frontier.safe_http import HttpLimits, SafeClient, SlotPassed
from tests.conditions import wait_until
from tests.fetch_harness import after, article, fetcher_for, frontier_row, submit
from tests.local_site import LocalSite

DELAY_MS = 500  # margin: a tenth, 50 ms
CAP_MS = 100  # the fetchers' and the spider's cap on the margin


async def test_a_request_that_cannot_start_within_the_margin_is_not_sent(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/a", article("Alpha story"))
    await submit(db, local_site.url("/a"), delay_ms=DELAY_MS)
    async with fetcher_for(db, delay_ms=DELAY_MS) as fetcher:
        politeness = fetcher.pipeline.politeness
        # The slot's answer as if it came 60 ms after it was asked for: past the margin.
        politeness.clock = lambda: time.monotonic() - 0.06
        assert (await fetcher.run_once()).claimed == 1
        assert local_site.hits("/robots.txt") and not local_site.hits("/a")
        row = await frontier_row(db, local_site.url("/a"))
        assert (row["status"], row["retry_count"]) == ("pending", 0)
        assert row["last_error"].startswith(LATE), row["last_error"]

        politeness.clock = time.monotonic
        assert (await fetcher.run_once(now=after(5))).claimed == 1
    assert len(local_site.hits("/a")) == 1
    row = await frontier_row(db, local_site.url("/a"))
    assert (row["status"], row["retry_count"]) == ("fetched", 0)


async def test_the_client_sends_nothing_past_the_deadline(local_site: LocalSite) -> None:
    local_site.serve("/a", "fine")
    limits = HttpLimits("frontier-test/1.0", allow_private_networks=True)
    async with SafeClient(limits) as client:
        with pytest.raises(SlotPassed, match="ms past its politeness slot"):
            await client.get(local_site.url("/a"), send_by=time.monotonic() - 0.001)
        assert local_site.hits("/a") == []
        # The connection it had opened is not reused half-written: the next request is whole.
        answer = await client.get(local_site.url("/a"), send_by=time.monotonic() + 60)
        assert (answer.status, answer.body) == (200, b"fine")
    assert len(local_site.hits("/a")) == 1


async def test_setting_up_a_new_connection_does_not_count_against_the_deadline(
    local_site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    local_site.serve("/a", "fine")
    connect = aiohttp.TCPConnector._create_connection
    deadline = time.monotonic() + 0.05

    async def slow_handshake(self: Any, *args: Any) -> Any:
        # A far site's TCP and TLS handshakes, taking longer than the margin.
        await wait_until(lambda: time.monotonic() > deadline, deadline_s=5, tick_s=0.01)
        return await connect(self, *args)

    monkeypatch.setattr(aiohttp.TCPConnector, "_create_connection", slow_handshake)
    limits = HttpLimits("frontier-test/1.0", allow_private_networks=True)
    async with SafeClient(limits) as client:
        answer = await client.get(local_site.url("/a"), send_by=deadline)
    assert answer.status == 200 and len(local_site.hits("/a")) == 1


async def test_the_first_page_request_waits_the_delay_after_the_robots_request(
    db: Database, local_site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    handled: list[float] = []

    async def robots(_request: web.Request) -> web.StreamResponse:
        handled.append(time.monotonic())  # the request has arrived by now
        return web.Response(text="User-agent: *\nAllow: /\n", content_type="text/plain")

    local_site.route("/robots.txt", robots)
    local_site.serve("/a", article("Alpha story"))
    await submit(db, local_site.url("/a"), delay_ms=DELAY_MS)
    async with fetcher_for(db, delay_ms=DELAY_MS) as fetcher:
        step = fetcher.pipeline.robots
        check = step.check
        not_before: list[dict[str, float]] = []

        async def recorded(*args: Any, **options: Any) -> dict[str, float]:
            not_before.append(await check(*args, **options))
            return not_before[-1]

        monkeypatch.setattr(step, "check", recorded)
        await fetcher.run_once()
    [robots_at] = handled
    [(_, first_page_at)] = [item for found in not_before for item in found.items()]
    # However late the robots.txt request left, the page waits the delay (and the margin)
    # from a moment after it reached the host, not from when the fetcher set out to make it.
    assert first_page_at >= robots_at + (DELAY_MS + margin_ms(DELAY_MS, CAP_MS)) / 1000
    [robots_request] = local_site.hits("/robots.txt")
    [page] = local_site.hits("/a")
    assert page.at - robots_request.at >= DELAY_MS / 1000


async def test_the_statements_keep_the_margins_the_fetcher_computes(db: Database) -> None:
    delays = [0, 1, 50, 300, 1000, 5000]
    for delay in delays:
        await db.execute(
            "INSERT INTO host_state (host, min_delay_ms) VALUES ($1, $2)", f"h{delay}", delay
        )
    t0 = datetime(2026, 5, 1, tzinfo=UTC)
    hosts = HostRepository(db)
    starts = await hosts.begin_requests(
        [(f"h{d}", t0 + timedelta(seconds=1)) for d in delays], "w1", margin_ms=CAP_MS, now=t0
    )
    rows = await db.fetch("SELECT host, next_allowed_at FROM host_state")
    moved = {r["host"]: r["next_allowed_at"] for r in rows}
    for delay in delays:
        margin = margin_ms(delay, CAP_MS)
        assert starts[f"h{delay}"] == RequestStart(True, margin or None), delay
        if delay:
            assert moved[f"h{delay}"] == t0 + timedelta(milliseconds=delay + margin), delay
        later = t0 + timedelta(seconds=10)
        slot = await hosts.take_slot(f"h{delay}", new_host_delay_ms=0, margin_ms=CAP_MS, now=later)
        assert (slot.taken, slot.margin_ms) == (True, margin or None), delay
    new = await hosts.take_slot("new.example", new_host_delay_ms=50, margin_ms=CAP_MS, now=t0)
    assert new.margin_ms == margin_ms(50, CAP_MS)
    assert await db.fetchval(
        "SELECT next_allowed_at FROM host_state WHERE host = 'new.example'"
    ) == t0 + timedelta(milliseconds=50 + margin_ms(50, CAP_MS))
