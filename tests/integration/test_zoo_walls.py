"""The CMS zoo's walls (tests/zoo/walls.py): CDN bot walls, logins and legal blocks cost a
handful of requests and end `dead` (`forbidden`; a challenge is retried instead, see
test_zoo_verdicts.py) without blocking a healthy host; a 429 or
503 with Retry-After is waited out exactly; robots.txt is fetched once per host however
many fetchers want it. Requests are counted at the server, over a pinned clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from email.utils import format_datetime

import pytest

from fetcher.page import Page
from fetcher.politeness import BatchHolds
from fetcher.source_cache import UNKNOWN
from fetcher.worker import Fetcher
from frontier.clock import utcnow
from frontier.db import Database
from frontier.hosts import HostRepository
from tests.fetch_harness import article, fetcher_for, frontier_row, host_row, submit
from tests.local_site import LocalSite, running_site
from tests.zoo import walls

ARTICLES = [f"/2026/11/23/story-{i}" for i in range(5)]


def start() -> datetime:
    """A pinned clock's start: the next whole second (HTTP-dates have no fraction, and
    URLs submitted just now are due by then)."""
    return utcnow().replace(microsecond=0) + timedelta(seconds=1)


def pages(site: LocalSite) -> list[str]:
    return [seen.path for seen in site.requests if seen.path != "/robots.txt"]


async def run_over(fetcher: Fetcher, t0: datetime, seconds: int, step: int) -> None:
    """`run_once` every `step` seconds of a pinned clock from t0 for `seconds`."""
    for t in range(0, seconds + 1, step):
        await fetcher.run_once(now=t0 + timedelta(seconds=t))


async def stored(db: Database, site: LocalSite, paths: Iterable[str]) -> dict[str, str]:
    urls = [site.url(p) for p in paths]
    rows = await db.fetch("SELECT url, body FROM raw_content WHERE url = ANY($1::text[])", urls)
    return {r["url"]: r["body"] for r in rows}


@pytest.mark.parametrize(
    "wall", [walls.cloudflare_challenge, walls.akamai_access_denied], ids=["cloudflare", "akamai"]
)
async def test_a_bot_walled_host_costs_a_handful_of_requests_a_day(
    db: Database, local_site: LocalSite, wall: Callable[[LocalSite, Iterable[str]], None]
) -> None:
    paths = [f"/news/2026/story-{i}" for i in range(20)]
    wall(local_site, paths)
    await submit(db, *(local_site.url(p) for p in paths))
    t0 = start()
    async with fetcher_for(db) as fetcher:
        await run_over(fetcher, t0, 3600, 120)
        first_hour = len(pages(local_site))
        await run_over(fetcher, t0 + timedelta(seconds=3720), 86_400 - 3720, 120)
    asked = pages(local_site)
    # One request per URL at 2 attempts would be 40, at the retry limit 60 or more.
    assert 3 <= first_hour <= 5, asked
    assert len(asked) <= 10, asked
    assert len(local_site.hits("/robots.txt")) == 1  # a 403 robots.txt: allow all, cached
    host = await host_row(db, f"{local_site.address}:{local_site.port}")
    assert host["backoff_until"] > t0 + timedelta(days=1)
    challenge = wall is walls.cloudflare_challenge  # a challenge, not a refusal: never dead
    for path in paths:
        row = await frontier_row(db, local_site.url(path))
        tries = asked.count(path)
        assert tries <= 2, path
        if tries == 2 and not challenge:
            assert (row["status"], row["dead_reason"]) == ("dead", "forbidden")
            assert "HTTP 403" in row["last_error"] and row["http_status"] == 403
        else:
            assert (row["status"], row["retry_count"]) == ("pending", tries)
        if challenge and tries:
            assert row["last_error"].startswith("HTTP 403: challenge page: Cloudflare")
    assert not await stored(db, local_site, paths)


async def test_one_forbidden_page_does_not_block_a_healthy_host(
    db: Database, local_site: LocalSite
) -> None:
    """A WordPress site with one members-only 403 page and one article withheld by a 451:
    both end dead (forbidden) after two requests each, every article is stored once with
    its text, and the host never backs off."""
    for i, path in enumerate(ARTICLES):
        local_site.serve(path, article(f"Story {i}", word=f"word{i}"))
    local_site.serve("/members-only", "<h1>403 Forbidden</h1>", status=403)
    walls.legally_blocked(local_site, "/2026/11/23/withheld")
    blocked = ["/members-only", "/2026/11/23/withheld"]
    await submit(db, *(local_site.url(p) for p in [*ARTICLES, *blocked]))
    t0 = start()
    async with fetcher_for(db) as fetcher:
        await run_over(fetcher, t0, 20 * 60, 60)
    asked = pages(local_site)
    assert sorted(asked) == sorted([*ARTICLES, *blocked, *blocked])
    for path in blocked:
        row = await frontier_row(db, local_site.url(path))
        assert (row["status"], row["dead_reason"]) == ("dead", "forbidden")
    error = (await frontier_row(db, local_site.url(blocked[1])))["last_error"]
    assert error.startswith("HTTP 451") and '/takedowns/42>; rel="blocked-by"' in error
    bodies = await stored(db, local_site, ARTICLES)
    assert len(bodies) == len(ARTICLES)
    assert all(f"word{i}" in bodies[local_site.url(p)] for i, p in enumerate(ARTICLES))
    host = await host_row(db, f"{local_site.address}:{local_site.port}")
    assert host["backoff_until"] is None


async def test_a_paywalled_article_ends_forbidden_after_two_requests(db: Database) -> None:
    async with running_site("127.0.0.2") as site:
        for i, path in enumerate(ARTICLES[:3]):
            site.serve(path, article(f"Open {i}"))
        walls.subscriber_only(site, "/premium/the-scoop")
        await submit(db, *(site.url(p) for p in [*ARTICLES[:3], "/premium/the-scoop"]))
        t0 = start()
        async with fetcher_for(db) as fetcher:
            await run_over(fetcher, t0, 15 * 60, 60)
        assert pages(site).count("/premium/the-scoop") == 2
        assert len(pages(site)) == 5
        row = await frontier_row(db, site.url("/premium/the-scoop"))
        assert (row["status"], row["dead_reason"], row["http_status"]) == ("dead", "forbidden", 401)
        assert 'WWW-Authenticate: Basic realm="Subscribers"' in row["last_error"]
        assert len(await stored(db, site, ARTICLES[:3])) == 3


@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize("form", ["delta-seconds", "http-date"])
async def test_retry_after_is_waited_out_exactly(
    db: Database, local_site: LocalSite, status: int, form: str
) -> None:
    url = local_site.url("/2026/11/23/hot-story")
    await submit(db, url)
    t0 = start()  # after the submit: the URL is due by then
    wait = timedelta(seconds=120)
    value = "120" if form == "delta-seconds" else format_datetime(t0 + wait, usegmt=True)
    walls.rate_limited_first(
        local_site, "/2026/11/23/hot-story", article("Hot story"), status=status, retry_after=value
    )
    async with fetcher_for(db) as fetcher:
        assert (await fetcher.run_once(now=t0)).claimed == 1
        row = await frontier_row(db, url)
        assert (row["status"], row["retry_count"], row["http_status"]) == ("pending", 0, status)
        early = await fetcher.run_once(now=t0 + wait - timedelta(milliseconds=1))
        assert early.claimed == 0
        assert pages(local_site) == ["/2026/11/23/hot-story"]
        assert (await fetcher.run_once(now=t0 + wait)).claimed == 1
    assert pages(local_site) == ["/2026/11/23/hot-story"] * 2
    row = await frontier_row(db, url)
    assert (row["status"], row["retry_count"]) == ("fetched", 0)
    body = (await stored(db, local_site, ["/2026/11/23/hot-story"]))[url]
    assert "Hot story paragraph 3" in body


async def test_two_batches_starting_together_fetch_robots_txt_once(
    db: Database, local_site: LocalSite
) -> None:
    """Two fetchers (two processes' worth: separate clients, worker ids and batches) each
    claim a URL of one host whose robots.txt is unknown and run their batches at once."""
    local_site.serve(
        "/robots.txt", "User-agent: *\nDisallow: /private/\n", content_type="text/plain"
    )
    for path in ARTICLES[:2]:
        local_site.serve(path, article(path))
    await submit(db, *(local_site.url(p) for p in ARTICLES[:2]))
    async with fetcher_for(db, worker_id="w-a") as a, fetcher_for(db, worker_id="w-b") as b:
        claims_a, claims_b = await a.claim(1), await b.claim(1)
        assert len(claims_a) == len(claims_b) == 1
        await asyncio.gather(a.process(claims_a), b.process(claims_b))
        await a.run_once(now=start() + timedelta(seconds=10))  # a deferred URL, if any
    assert len(local_site.hits("/robots.txt")) == 1
    assert sorted(pages(local_site)) == sorted(ARTICLES[:2])


async def test_a_batch_that_saw_robots_txt_missing_reads_what_another_just_stored(
    db: Database, local_site: LocalSite
) -> None:
    """The race behind double robots.txt fetches: batch B reads the host (robots.txt not
    fetched yet), batch A fetches and stores it and gives its lease back, then B goes on.
    B must not fetch it again: its lease is refused, it reads the stored robots.txt."""
    local_site.serve(
        "/robots.txt", "User-agent: *\nDisallow: /private/\n", content_type="text/plain"
    )
    local_site.serve(ARTICLES[0], article("A"))
    await submit(db, local_site.url(ARTICLES[0]), local_site.url("/private/b"))
    hosts = HostRepository(db)
    async with fetcher_for(db, worker_id="w-a") as a, fetcher_for(db, worker_id="w-b") as b:
        claims_b = await b.claim(1)
        stale = await hosts.context([claims_b[0].host])
        assert stale[claims_b[0].host].robots_needed()
        await a.run_once()
        assert len(local_site.hits("/robots.txt")) == 1
        page = Page(claims_b[0], UNKNOWN)
        await b.pipeline.robots.check([page], stale, BatchHolds(hosts, "w-b", claims_b, stale))
    assert len(local_site.hits("/robots.txt")) == 1
    if claims_b[0].url.endswith("/private/b"):
        assert page.outcome is not None and page.outcome.kind == "robots_blocked"
    else:
        assert page.outcome is None  # allowed: goes on to be fetched
