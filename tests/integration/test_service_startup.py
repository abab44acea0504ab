"""What the long-running services do when they start, as deployed: `frontier poll` seeds the
default sources only when asked (`frontier up` seeds them), each service warns once when it
runs with the packaged User-Agent, and `frontier spider --due --every` is a service that
SIGTERM stops with exit 0 (compose's `spider` service, no shell loop)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from frontier.db import Database
from frontier.settings import Settings
from frontier.sources import SourceRepository
from frontier.states import IngestionMode
from poller.service import poll_forever
from tests.conditions import wait_until
from tests.local_site import LocalSite
from tests.processes import REPO, free_port

WARNING = "FRONTIER_USER_AGENT is the default"
DEADLINE_S = 60.0


@asynccontextmanager
async def service(
    dsn: str, log: Path, *args: str, **settings: str
) -> AsyncIterator[asyncio.subprocess.Process]:
    """`python -m frontier ARGS` with the DSN and `settings` set (the default User-Agent)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    env.update(FRONTIER_DATABASE_URL=dsn, **settings)
    with log.open("wb") as out:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "frontier",
            *args,
            env=env,
            cwd=REPO,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=out,
        )
        try:
            yield child
        finally:
            if child.returncode is None:
                child.kill()
                await child.wait()
            print(log.read_text(errors="replace")[-3000:])


async def test_poll_seeds_the_default_sources_only_when_asked(
    settings: Settings, db: Database
) -> None:
    stopped = asyncio.Event()
    stopped.set()  # the poller returns after start-up: what it did before polling remains
    await poll_forever(settings, db, stop=stopped)
    assert await db.fetchval("SELECT count(*) FROM seeded_sources") == 0

    await poll_forever(settings, db, seed_defaults=True, stop=stopped)
    seeded = await db.fetchval("SELECT count(*) FROM seeded_sources")
    assert seeded > 0
    assert (
        await db.fetchval(
            "SELECT count(*) FROM sources WHERE name <> ALL($1)", ["manual", "discovered"]
        )
        == seeded
    )


@pytest.mark.parametrize(
    "args",
    [["poll"], ["fetch"], ["serve", "--port", "0"], ["spider", "--due", "--every", "1h"]],
    ids=["poll", "fetch", "serve", "spider"],
)
async def test_a_service_with_the_default_user_agent_warns_once_naming_the_setting(
    fresh_dsn: str, tmp_path: Path, args: list[str]
) -> None:
    if args[0] == "serve":
        args = ["serve", "--port", str(free_port())]
    log = tmp_path / "service.log"
    async with service(fresh_dsn, log, *args) as child:
        await wait_until(
            lambda: WARNING in log.read_text(errors="replace"), child, what="the warning", log=log
        )
        assert child.returncode is None  # a warning, not a refusal to run
    assert log.read_text(errors="replace").count(WARNING) == 1


async def test_spider_every_is_a_service_that_sigterm_stops_with_exit_0(
    db: Database, fresh_dsn: str, tmp_path: Path, local_site: LocalSite
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    local_site.serve("/", '<a href="/2024/01/01/a-story">a story</a>')
    await SourceRepository(db).add(
        "site", base_url=local_site.url("/"), rate_limit_ms=0, mode=IngestionMode.SPIDER
    )
    log = tmp_path / "spider.log"
    async with service(
        fresh_dsn, log, "spider", "--due", "--every", "1h", FRONTIER_ALLOW_PRIVATE_NETWORKS="true"
    ) as child:

        async def crawled() -> bool:  # the first tick took the source and crawled it
            return bool(
                await db.fetchval(
                    "SELECT count(*) FROM spider_state WHERE last_outcome IS NOT NULL"
                )
            )

        await wait_until(crawled, child, what="the spider's first crawl", log=log)
        assert child.returncode is None  # --every keeps it running for the next look
        child.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(child.wait(), DEADLINE_S)
    assert code == 0, log.read_text(errors="replace")
    assert "site" in log.read_text(errors="replace")  # the crawl's summary line


def test_every_needs_due(fresh_dsn: str) -> None:
    from typer.testing import CliRunner

    from frontier_cli import load_commands

    result = CliRunner().invoke(
        load_commands(),
        ["spider", "some-source", "--every", "5m"],
        env={"FRONTIER_DATABASE_URL": fresh_dsn},
    )
    assert result.exit_code == 2
    assert "--every needs --due" in result.output
