"""`frontier spider` as a user runs it (the CLI in a process of its own, which runs the
crawl in another), against a local site."""

from __future__ import annotations

import json

from frontier.db import Database
from frontier.sources import SourceRepository
from frontier.states import IngestionMode
from tests.local_site import LocalSite
from tests.processes import clean_env, frontier_output


async def frontier(*args: str, dsn: str) -> tuple[int, str, str]:
    return await frontier_output(*args, env=clean_env(dsn, FRONTIER_ALLOW_PRIVATE_NETWORKS="true"))


async def test_spider_command_prints_the_summary_and_due_runs_each_source_once(
    db: Database, fresh_dsn: str, local_site: LocalSite
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    local_site.serve("/", '<a href="/2024/01/01/a-story">s</a><a href="/news">n</a>')
    local_site.serve("/news", '<a href="/2024/01/02/another-story">s</a>')
    await SourceRepository(db).add(
        "site", base_url=local_site.url("/"), rate_limit_ms=0, mode=IngestionMode.SPIDER
    )

    code, out, err = await frontier(
        "spider", "site", "--max-depth", "0", "--json", "--interval-hours", "12", dsn=fresh_dsn
    )
    assert code == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert (summary["pages_crawled"], summary["new_urls"]) == (1, 1)
    assert summary["classification"] == "heuristic"
    assert set(summary) >= {"articles_found", "external_links", "errors", "elapsed_s"}

    # The run above set the next run 12 h ahead: nothing is due.
    code, out, err = await frontier("spider", "--due", dsn=fresh_dsn)
    assert code == 0, err
    assert "no source is due" in out

    await db.execute("UPDATE spider_state SET spider_next_run_at = now() - interval '1 s'")
    code, out, err = await frontier("spider", "--due", "--max-depth", "1", dsn=fresh_dsn)
    assert code == 0, err
    assert out.startswith("site: 2 pages crawled, 2 article URLs found, 1 new"), out
    count = await db.fetchval("SELECT count(*) FROM url_frontier WHERE origin = 'spider'")
    assert count == 2


async def test_spider_command_usage_errors_exit_2(db: Database, fresh_dsn: str) -> None:
    code, _, err = await frontier("spider", dsn=fresh_dsn)
    assert code == 2 and "SOURCE or --due" in err
    code, _, err = await frontier("spider", "nope", dsn=fresh_dsn)
    assert code == 2 and "no source named 'nope'" in err
    # A row stored before the schema refused bad regexes: the spider still refuses it.
    bad = await SourceRepository(db).add("bad", base_url="http://127.0.0.1:9/")
    await db.execute(
        "UPDATE sources SET article_url_patterns = '{(unclosed}' WHERE id = $1", bad.id
    )
    code, out, _ = await frontier("spider", "bad", "--json", dsn=fresh_dsn)
    assert code == 2
    assert "not a valid regular expression" in json.loads(out)["error"]
