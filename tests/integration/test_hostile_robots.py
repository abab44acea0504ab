"""Hostile robots.txt files (issue 35, item 1): the fetcher parses robots.txt in a parse
process (`frontier.parse_pool`), never on its event loop; a parse over a limit, or a
group for the crawler of more rules than are matched per page, leaves the host
"unavailable" for now (disallow_all, robots.txt fetched again later), the page waiting
and never requested; the API matches a stored robots.txt in a parse process too, and the
spider parses one in a parse process, off Scrapy's reactor (issue 34).

Real local sites on 127.0.0.1 serve the files (`bench.hostile_documents`). Nothing is
timed: the event loop's progress is a ticker counting while each parse is awaited.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from bench.hostile_documents import robots_many_groups, robots_many_rules
from frontier.api.app import create_app
from frontier.db import Database
from frontier.parse_pool import ParseLimits, ParsePool
from frontier.robots import MAX_GROUP_RULES, ROBOTS_MAX_BYTES
from frontier.settings import Settings
from spider.service import crawl_in_child, job_for
from tests.fetch_harness import after, article, fetcher_for, frontier_row, host_row, submit
from tests.integration.test_api import AUTH, make_settings
from tests.integration.test_spider import add_spider_source, html
from tests.local_site import LocalSite
from tests.watched_pool import WatchedPool, watching

HOSTILE = robots_many_groups(ROBOTS_MAX_BYTES, rule_for_all="/private/")


def host_of(site: LocalSite) -> str:
    return f"{site.address}:{site.port}"


@pytest.fixture
async def watched() -> AsyncIterator[WatchedPool]:
    async with watching() as pool:
        yield pool


async def robots_log(db: Database) -> list[tuple[str, str | None]]:
    rows = await db.fetch("SELECT outcome, error FROM fetch_log WHERE kind = 'robots' ORDER BY id")
    return [(r["outcome"], r["error"]) for r in rows]


async def test_a_costly_robots_txt_is_parsed_while_the_event_loop_serves(
    db: Database, local_site: LocalSite, watched: WatchedPool
) -> None:
    local_site.serve("/robots.txt", HOSTILE, content_type="text/plain")
    local_site.serve("/a", article("Open"))
    await submit(db, local_site.url("/a"), local_site.url("/private/b"))
    async with fetcher_for(db, parser=watched) as fetcher:
        await fetcher.run_once()
        await fetcher.run_once(now=after(5))  # the second page: its rules, parsed again
    host = await host_row(db, host_of(local_site))
    assert host["robots_status"] == "ok"
    assert (await frontier_row(db, local_site.url("/a")))["status"] == "fetched"
    assert (await frontier_row(db, local_site.url("/private/b")))["dead_reason"] == (
        "robots_blocked"
    )
    assert local_site.hits("/private/b") == []
    # the body once (interpret), the stored file once per batch whose rules were not
    # cached yet: each in a process of its own, and the event loop turned meanwhile
    assert len(watched.pids) >= 2 and os.getpid() not in watched.pids
    assert all(watched.served_during_parse)


async def test_a_group_of_too_many_rules_is_unavailable_for_now(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/robots.txt", robots_many_rules(ROBOTS_MAX_BYTES), content_type="text/plain")
    local_site.serve("/a", article("A"))
    await submit(db, local_site.url("/a"))
    async with fetcher_for(db, robots_retry_s=600) as fetcher:
        await fetcher.run_once()
    host = await host_row(db, host_of(local_site))
    assert host["robots_status"] == "disallow_all" and host["robots_retry_at"] is not None
    assert f"more than the {MAX_GROUP_RULES} read" in host["robots_error"]
    row = await frontier_row(db, local_site.url("/a"))
    assert (row["status"], row["fetch_count"]) == ("pending", 0)
    assert local_site.hits("/a") == []
    [(outcome, error)] = await robots_log(db)
    assert outcome == "failed" and f"more than the {MAX_GROUP_RULES} read" in (error or "")


async def test_a_robots_parse_over_its_limit_is_unavailable_then_fetched_again(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/robots.txt", HOSTILE, content_type="text/plain")
    local_site.serve("/a", article("A"))
    await submit(db, local_site.url("/a"))
    # a wall-clock limit no parse of a 512 KiB file meets
    async with (
        ParsePool(ParseLimits(timeout_s=0.01)) as strict,
        fetcher_for(db, parser=strict, robots_retry_s=60) as fetcher,
    ):
        summary = await fetcher.run_once()
    assert summary.claimed == 1  # and the fetcher is still there: nothing raised
    host = await host_row(db, host_of(local_site))
    assert host["robots_status"] == "disallow_all"
    assert "robots.txt unreadable" in host["robots_error"]
    assert "longer than the limit of 0.01 s" in host["robots_error"]
    row = await frontier_row(db, local_site.url("/a"))
    assert (row["status"], row["fetch_count"]) == ("pending", 0)
    assert local_site.hits("/a") == []
    # retried later (RFC 9309: "unavailable" is not cached), within the limits it passes
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once(now=after(3600))
    assert (await host_row(db, host_of(local_site)))["robots_status"] == "ok"
    assert (await frontier_row(db, local_site.url("/a")))["status"] == "fetched"
    assert len(local_site.hits("/robots.txt")) == 2


async def test_the_api_matches_a_stored_robots_txt_in_a_parse_process(
    db: Database, local_site: LocalSite, fresh_dsn: str, tmp_path: Path
) -> None:
    local_site.serve("/robots.txt", HOSTILE, content_type="text/plain")
    local_site.serve("/a", article("A"))
    await submit(db, local_site.url("/a"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()  # stores the robots.txt
    await submit(db, local_site.url("/private/b"))
    app = create_app(make_settings(fresh_dsn, tmp_path), db)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as api:
        key = quote(local_site.url("/private/b"), safe="")
        response = await api.get(f"/api/v1/urls/{key}", headers=AUTH)
        assert response.status_code == 200, response.text
        assert response.json()["why"]["cause"] == "robots_disallows"
        parser = app.state.context.parser
        assert parser is not None and parser.pids and os.getpid() not in parser.pids


async def test_the_spider_parses_robots_txt_in_a_parse_process_under_its_limits(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite
) -> None:
    local_site.serve("/robots.txt", HOSTILE, content_type="text/plain")
    local_site.serve("/", html("/open", "/private/b"))
    local_site.serve("/open", html("/2024/01/01/a"))
    await add_spider_source(db, "hostile", local_site.url("/"))
    # a wall-clock limit no parse of a 512 KiB file meets: the host is unavailable for the
    # crawl, as for the fetchers (parsed on the reactor, the file was read whatever it cost)
    strict = settings.model_copy(update={"parse_timeout_s": 0.01})
    result = await crawl_in_child(job_for(strict, fresh_dsn, "hostile", max_depth=1))
    assert local_site.hits("/robots.txt") and not local_site.hits("/"), local_site.requests
    assert result.summary.pages_crawled == 0 and result.summary.robots_blocked >= 1
    assert "robots.txt unreadable: parse took longer than the limit of 0.01 s" in (
        result.summary.last_error or ""
    )
    # within the limits the same file is read, and its rule for everyone applies
    result = await crawl_in_child(job_for(settings, fresh_dsn, "hostile", max_depth=1))
    assert local_site.hits("/open") and not local_site.hits("/private/b")
    assert result.summary.robots_blocked == 1
