"""A request goes out within its politeness slot's margin of asking for it, or not at all
(fetcher/politeness.py): the next requester's turn comes the delay and the margin after
the slot was taken, so a request that starts later could reach the host less than the
delay before the next one. And the first page request after robots.txt waits out the
delay from the robots.txt answer, which comes after its request went out, however late."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fetcher.politeness import LATE, margin_ms
from frontier.db import Database
from frontier.hosts import HostRepository, RequestStart
from frontier.safe_http import HttpLimits, Response, SafeClient, SlotPassed
from tests.fetch_harness import after, article, fetcher_for, frontier_row, submit
from tests.local_site import LocalSite

DELAY_MS = 500  # margin: a tenth, 50 ms
CAP_MS = 100  # the fetchers' and the spider's cap on the margin


class SlowAnswers:
    """A fetcher's `begin_requests` whose answers come `late_s` after they were asked (as
    a row lock, the commit or a busy event loop make them)."""

    def __init__(self, hosts: HostRepository, monkeypatch: pytest.MonkeyPatch) -> None:
        self.late_s = 0.0
        self.ask = hosts.begin_requests
        monkeypatch.setattr(hosts, "begin_requests", self.begin_requests)

    async def begin_requests(
        self, slots: Sequence[tuple[str, datetime]], owner: str, **options: Any
    ) -> dict[str, RequestStart]:
        answer = await self.ask(slots, owner, **options)
        await asyncio.sleep(self.late_s)  # the time the answer takes, not a wait for it
        return answer


async def test_a_request_that_cannot_start_within_the_margin_is_not_sent(
    db: Database, local_site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    local_site.serve("/a", article("Alpha story"))
    await submit(db, local_site.url("/a"), delay_ms=DELAY_MS)
    async with fetcher_for(db, delay_ms=DELAY_MS) as fetcher:
        answers = SlowAnswers(fetcher.hosts, monkeypatch)
        answers.late_s = 0.06  # past the margin
        assert (await fetcher.run_once()).claimed == 1
        assert local_site.hits("/robots.txt") and not local_site.hits("/a")
        row = await frontier_row(db, local_site.url("/a"))
        assert (row["status"], row["retry_count"]) == ("pending", 0)
        assert row["last_error"].startswith(LATE), row["last_error"]

        answers.late_s = 0.0
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


class LateRobotsRequests:
    """The fetcher's client as its robots.txt step sees it: each request leaves `lag_s`
    after it was made (a busy event loop, a slow DNS answer)."""

    def __init__(self, client: SafeClient, lag_s: float) -> None:
        self.client = client
        self.lag_s = lag_s

    async def get(self, url: str, **options: Any) -> Response:
        await asyncio.sleep(self.lag_s)
        return await self.client.get(url, **options)


async def test_the_first_page_request_keeps_the_delay_after_a_late_robots_request(
    db: Database, local_site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    local_site.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")
    local_site.serve("/a", article("Alpha story"))
    await submit(db, local_site.url("/a"), delay_ms=DELAY_MS)
    async with fetcher_for(db, delay_ms=DELAY_MS) as fetcher:
        robots = fetcher.pipeline.robots
        monkeypatch.setattr(robots, "client", LateRobotsRequests(robots.client, lag_s=0.2))
        await fetcher.run_once()
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
