"""What the long-running services print at the default level: a `frontier poll` process
says each failing poll in one line, cause first (it printed nothing in 40 s while five
polls failed, at WARNING); FRONTIER_LOG_FORMAT=json makes it JSON lines; `frontier spider
--due` says an unreachable site in lines, not a 60-line Scrapy traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frontier.db import Database
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from tests.conditions import wait_until
from tests.fetch_harness import article
from tests.integration.test_poll import rss
from tests.local_site import LocalSite
from tests.processes import free_port, frontier_env, frontier_output, frontier_process


async def test_a_polling_service_logs_each_failed_poll_cause_first(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    port = free_port()  # nothing listens there: every poll is refused
    await SourceRepository(db).create(
        parse_config({"name": "news-x", "feed_url": f"http://127.0.0.1:{port}/rss"})
    )
    async with frontier_process(
        fresh_dsn, tmp_path, "poll", FRONTIER_POLL_TICK_S="0.5", FRONTIER_LOG_FORMAT="json"
    ) as process:
        log = tmp_path / "poll-0.log"

        def failed_line() -> dict[str, object] | None:
            for line in log.read_text(errors="replace").splitlines():
                if line.startswith("{") and "poll failed" in line:
                    entry: dict[str, object] = json.loads(line)
                    return entry
            return None

        entry = await wait_until(failed_line, process, what="a poll-failed line", log=log)
    assert entry["level"] == "WARNING" and entry["logger"] == "poller"
    assert entry["source"] == "news-x" and entry["outcome"] == "failed"
    message = str(entry["message"])
    assert message.startswith(f"poll failed: cannot connect to 127.0.0.1:{port}: ")
    assert message.endswith(f"(source news-x, http://127.0.0.1:{port}/rss)")
    assert "Traceback" not in log.read_text(errors="replace")


@pytest.mark.parametrize("log_format", ["text", "json"])
async def test_spider_due_says_an_unreachable_site_without_a_traceback(
    db: Database, fresh_dsn: str, log_format: str
) -> None:
    port = free_port()
    await SourceRepository(db).create(
        parse_config(
            {
                "name": "gone-site",
                "base_url": f"http://127.0.0.1:{port}/",
                "ingestion_mode": "spider",
            }
        )
    )
    env = frontier_env(fresh_dsn, FRONTIER_LOG_FORMAT=log_format)
    code, out, err = await frontier_output("spider", "--due", env=env)
    assert code == 1, out + err
    assert "Traceback" not in err, err
    assert len(err.splitlines()) < 10, err
    if log_format == "json":  # the crawl child's Scrapy lines too
        assert all(json.loads(line)["level"] for line in err.splitlines()), err
    assert "last error: robots.txt unreachable: " in out, out
    row = await db.fetchrow("SELECT error FROM fetch_log WHERE kind = 'spider'")
    assert row is not None and row["error"].startswith("robots.txt unreachable: ")
    assert "errors" not in row["error"]


async def test_one_shot_poll_and_fetch_log_at_info(
    db: Database, fresh_dsn: str, local_site: LocalSite
) -> None:
    """`frontier poll --source X` with FRONTIER_LOG_LEVEL=INFO logs the poll; `frontier
    fetch --until-idle` logs at INFO as `frontier fetch` does (docs/operations.md, Logs)."""
    local_site.serve("/rss", rss(local_site.url("/story")), content_type="application/rss+xml")
    local_site.serve("/story", article("Logged"))
    await SourceRepository(db).create(
        parse_config({"name": "wire", "feed_url": local_site.url("/rss")})
    )
    code, out, err = await frontier_output(
        "poll", "--source", "wire", env=frontier_env(fresh_dsn, FRONTIER_LOG_LEVEL="INFO")
    )
    assert code == 0, err
    assert out.startswith("wire: ok, seen 1, new 1"), out
    assert "INFO poller: polled wire: ok, seen 1, new 1" in err, err
    code, out, err = await frontier_output("fetch", "--until-idle", env=frontier_env(fresh_dsn))
    assert code == 0, err
    assert out.startswith("fetch: 1 pages"), out
    assert "INFO fetcher" in err and "1 pages" in err, err
