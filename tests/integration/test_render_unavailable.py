"""Without a browser (FRONTIER_RENDER_CHROMIUM names none): a source with `render: always`
is a configuration error on that source, its pages retried with the reason and not
requested; one with `render: auto` keeps the plain result, the reason logged. And a page
whose rendering failed keeps its plain result, its outcome saying why."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from fetcher.config import FetcherConfig
from fetcher.render_pool import RenderLimits, RenderOverLimit
from fetcher.render_step import RenderStep
from fetcher.worker import Fetcher
from frontier.db import Database
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.settings import Settings
from frontier.sinks.postgres import PostgresSink
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from frontier.states import Origin
from tests.fetch_harness import UA, frontier_row
from tests.local_site import LocalSite
from tests.zoo.client_rendered import react_shell

LIMITS = HttpLimits(UA, allow_private_networks=True)


async def test_always_is_the_sources_error_and_auto_keeps_the_plain_page(
    db: Database, settings: Settings, local_site: LocalSite, caplog: pytest.LogCaptureFixture
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    react_shell(local_site, "/story/always", "/api/always.json", "swing")
    react_shell(local_site, "/story/auto", "/api/auto.json", "lifting")
    sources = SourceRepository(db)
    always = await sources.create(parse_config({"name": "always", "render": "always"}))
    auto = await sources.create(parse_config({"name": "auto", "render": "auto"}))
    await QueueRepository(db).submit(
        [
            Candidate(local_site.url("/story/always"), always.ref, Origin.MANUAL),
            Candidate(local_site.url("/story/auto"), auto.ref, Origin.MANUAL),
        ]
    )
    missing = settings.model_copy(update={"render_chromium": "/nonexistent/chromium"})
    renderer = RenderStep.from_settings(missing, db, LIMITS)
    assert renderer.unavailable is not None and "/nonexistent/chromium" in renderer.unavailable
    config = FetcherConfig(user_agent=UA, worker_id="w-no-browser", concurrency=2)
    async with SafeClient(LIMITS) as client:
        fetcher = Fetcher(
            db, client, PostgresSink(db), config, QueuePolicy(default_delay_ms=0), renderer=renderer
        )
        with caplog.at_level(logging.WARNING, logger="fetcher.render_step"):
            await fetcher.run(until_idle=True)

    row = await frontier_row(db, local_site.url("/story/always"))
    assert row["status"] == "pending" and row["last_error"] == (
        "render: always, but nothing can render here: no Chromium at "
        "FRONTIER_RENDER_CHROMIUM=/nonexistent/chromium (Debian: apt-get install chromium)"
    )
    assert local_site.hits("/story/always") == []  # not requested
    plain = await frontier_row(db, local_site.url("/story/auto"))
    assert plain["status"] != "fetched" and "no body text" in (plain["last_error"] or "")
    assert "kept as fetched, unrendered: no Chromium" in caplog.text


class OverTime:
    """Stands in for the browser pool: every page goes over its time limit."""

    async def render(self, url: str, document: Any, subrequests: Any) -> Any:
        raise RenderOverLimit("over the 20 s time limit")


async def test_a_shell_left_unrendered_says_why(db: Database, local_site: LocalSite) -> None:
    local_site.serve("/robots.txt", "", status=404)
    react_shell(local_site, "/story/slow", "/api/slow.json", "slow")
    source = await SourceRepository(db).create(parse_config({"name": "slow", "render": "auto"}))
    await QueueRepository(db).submit(
        [Candidate(local_site.url("/story/slow"), source.ref, Origin.MANUAL)]
    )
    limits = RenderLimits(None)
    async with SafeClient(LIMITS) as client:
        renderer = RenderStep(limits, client, pool=OverTime())  # type: ignore[arg-type]
        config = FetcherConfig(user_agent=UA, worker_id="w-slow", concurrency=2)
        fetcher = Fetcher(
            db, client, PostgresSink(db), config, QueuePolicy(default_delay_ms=0), renderer=renderer
        )
        await fetcher.run_once()

    row = await frontier_row(db, local_site.url("/story/slow"))
    assert row["last_error"] == "no body text (not rendered: over the 20 s time limit)"
