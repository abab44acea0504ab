"""`frontier spider` exit codes (issue 14, item 9), against local sites and the real
database: a crawl that went through exits 0 whatever dead links it met (a cron job must not
mail on every 404 of a site); 1 is a run that failed (a start page unreachable or
answering an error, URLs that could not be written); 2 a source that cannot be crawled as
configured (tests/integration/test_spider_cli.py)."""

from __future__ import annotations

import json

from frontier.db import Database
from frontier.settings import Settings
from frontier.sources import SourceRepository
from frontier.states import IngestionMode
from spider.service import crawl_in_child, job_for
from tests.integration.test_spider_cli import frontier
from tests.local_site import LocalSite
from tests.processes import free_port

DATED = r"/\d{4}/\d{2}/\d{2}/"


def html(*links: str) -> str:
    return "<html><body>" + "".join(f'<a href="{href}">x</a>' for href in links) + "</body></html>"


async def add_source(db: Database, base_url: str) -> None:
    await SourceRepository(db).add(
        "site",
        base_url=base_url,
        mode=IngestionMode.SPIDER,
        rate_limit_ms=0,
        article_patterns=[DATED],
    )


async def test_dead_links_met_on_the_way_leave_the_run_a_success(
    db: Database, fresh_dsn: str, local_site: LocalSite
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    local_site.serve("/", html("/2024/01/01/story", "/gone-section", "/broken-section", "/ok"))
    local_site.serve("/broken-section", "oops", status=500)
    local_site.serve("/ok", html("/2024/01/02/other", "/vanished"))
    # /gone-section and /vanished: 404 (LocalSite's default)
    await add_source(db, local_site.url("/"))

    code, out, err = await frontier("spider", "site", "--json", dsn=fresh_dsn)

    summary = json.loads(out.strip().splitlines()[-1])
    assert code == 0, (summary, err)
    assert summary["errors"] == 3 and summary["http_statuses"] == {"404": 2, "500": 1}
    assert summary["new_urls"] == 2 and summary["start_pages_failed"] == 0
    assert len(local_site.hits("/broken-section")) == 2  # retried once, as before
    assert await db.fetchval("SELECT outcome FROM fetch_log WHERE kind = 'spider'") == "ok"


async def test_a_start_page_answering_an_error_fails_the_run(
    db: Database, fresh_dsn: str, local_site: LocalSite
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    local_site.serve("/", "not here", status=404)
    await add_source(db, local_site.url("/"))

    code, out, _ = await frontier("spider", "site", dsn=fresh_dsn)

    assert code == 1
    assert "1 start pages failed" in out
    assert await db.fetchval("SELECT outcome FROM fetch_log WHERE kind = 'spider'") == "failed"


async def test_an_unreachable_start_page_fails_the_run(
    db: Database, settings: Settings, fresh_dsn: str
) -> None:
    await add_source(db, f"http://127.0.0.1:{free_port()}/")  # nothing listens there

    result = await crawl_in_child(job_for(settings, fresh_dsn, "site"))

    assert result.exit_code == 1, result.summary
    assert result.summary.start_pages_failed == 1 and result.summary.pages_crawled == 0


async def test_urls_that_could_not_be_written_fail_the_run(
    db: Database, settings: Settings, fresh_dsn: str, local_site: LocalSite
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    local_site.serve("/", html("/2024/01/01/story", "/2024/01/02/refused-story"))
    await add_source(db, local_site.url("/"))
    # The database refuses one URL's row (a real error from PostgreSQL, not a mock).
    await db.execute(
        """
        CREATE FUNCTION refuse_story() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.url LIKE '%refused-story' THEN
                RAISE EXCEPTION 'refused by the test';
            END IF;
            RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_story BEFORE INSERT ON url_frontier
            FOR EACH ROW EXECUTE FUNCTION refuse_story();
        """
    )

    result = await crawl_in_child(job_for(settings, fresh_dsn, "site"))

    assert result.exit_code == 1, result.summary
    # The batch failed whole: its two URLs and the start page's check were not written.
    assert result.summary.submit_errors == 3 and result.summary.start_pages_failed == 0
    assert "could not be written" in result.summary.render()
