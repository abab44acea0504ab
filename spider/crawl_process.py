"""`python -m spider.crawl_process`: one crawl in a process of its own (the Twisted reactor starts
once per process), fed a `CrawlJob` on standard input. It prints the run summary as one JSON
line, the last line on standard output, and exits 0 (the crawl went through, even if some
links it met were dead), 1 (the run failed: a start page could not be used, found URLs
could not be written, the run could not be read or recorded) or 2 (the source cannot be
crawled as configured); see `CrawlSummary.failed`.

Three phases: read the plan from the database (asyncio), crawl (Scrapy on the asyncio
reactor; the pipeline opens its own pool on the reactor's loop), record the run (asyncio).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from datetime import datetime

import scrapy
from scrapy.crawler import AsyncCrawlerProcess

from frontier import log_setup
from frontier.clock import utcnow
from frontier.db import Database
from frontier.errors import FrontierError
from frontier.fetch_log import FetchLogRepository, LogEntry
from frontier.settings import Settings
from frontier.sources import InvalidSource, UnknownSource
from frontier.states import FetchKind
from spider.crawl_settings import scrapy_settings
from spider.discovery import DiscoverySpider
from spider.errors import SpiderConfigError
from spider.job import CrawlJob
from spider.network_errors import quiet_network_errors
from spider.plan import CrawlPlan, load_plan
from spider.state import SpiderRepository
from spider.summary import CrawlSummary

EXIT_OK, EXIT_PARTIAL, EXIT_CONFIG = 0, 1, 2


async def _prepare(job: CrawlJob, settings: Settings, started_at: datetime) -> CrawlPlan:
    db = await Database.connect(job.dsn, max_size=2, timeout=settings.db_connect_timeout_s)
    try:
        return await load_plan(
            db,
            settings,
            job.source,
            max_pages=job.max_pages,
            max_depth=job.max_depth,
            started_at=started_at,
        )
    finally:
        await db.close()


async def _record(job: CrawlJob, plan: CrawlPlan, summary: CrawlSummary) -> None:
    assert plan.started_at is not None
    db = await Database.connect(job.dsn, max_size=2)
    try:
        await FetchLogRepository(db).record(
            [
                LogEntry(
                    kind=FetchKind.SPIDER,
                    source_id=plan.source_id,
                    url=plan.start_urls[0],
                    outcome=summary.outcome,
                    items_seen=summary.articles_found,
                    items_new=summary.new_urls,
                    elapsed_ms=int(summary.elapsed_s * 1000),
                    error=summary.cause,  # the cause in words, never a bare count
                )
            ]
        )
        await SpiderRepository(db).finish_run(
            plan.source_id, plan.started_at, str(summary.outcome), summary.as_json()
        )
    finally:
        await db.close()


def crawl(job: CrawlJob) -> tuple[CrawlSummary, int]:
    """Run one job to the end; every failure becomes a summary with an `error`."""
    started = time.monotonic()
    settings = Settings.load(**job.settings, _env_file=None)
    try:
        plan = asyncio.run(_prepare(job, settings, utcnow()))
    except (SpiderConfigError, UnknownSource, InvalidSource) as exc:
        return CrawlSummary(job.source, error=str(exc)), EXIT_CONFIG
    except FrontierError as exc:
        return CrawlSummary(job.source, error=str(exc)), EXIT_PARTIAL
    crawl_settings = scrapy_settings(
        settings, plan, job.dsn, with_pipeline=job.with_pipeline, log_level=job.log_level
    )
    # Scrapy reads LOG_INSTALL_ROOT_HANDLER from 2.19 on (and deprecates the argument);
    # before, only the argument keeps its text handler off the JSON lines.
    before_2_19 = {"install_root_handler": bool(crawl_settings["LOG_INSTALL_ROOT_HANDLER"])}
    process = AsyncCrawlerProcess(
        crawl_settings, **(before_2_19 if scrapy.version_info < (2, 19) else {})
    )
    crawler = process.create_crawler(DiscoverySpider)
    process.crawl(crawler, plan=plan)
    process.start(install_signal_handlers=True)
    assert crawler.stats is not None
    summary = CrawlSummary.from_stats(
        plan.source_name, crawler.stats.get_stats(), plan.uses_heuristic
    )
    summary.elapsed_s = round(time.monotonic() - started, 3)
    if job.record:
        try:
            asyncio.run(_record(job, plan, summary))
        except FrontierError as exc:
            summary.error = f"could not record the run: {exc}"
    return summary, EXIT_PARTIAL if summary.failed else EXIT_OK


def main() -> None:
    job = CrawlJob.from_json(sys.stdin.read())
    # Scrapy installs the root log handler at the job's LOG_LEVEL once the crawl starts;
    # before that, warnings reach standard error through logging's last-resort handler.
    logging.getLogger().setLevel(job.log_level)
    if job.settings.get("log_format") == "json":  # else Scrapy's own text handler
        level = logging.getLevelName(job.log_level.upper())
        # the handler holds the level: Scrapy resets the root logger's when the crawl starts
        log_setup.configure(level, "json").setLevel(level)
    quiet_network_errors(job.log_level)
    summary, code = crawl(job)
    sys.stdout.write(json.dumps(summary.as_json()) + "\n")
    sys.stdout.flush()
    sys.exit(code)


if __name__ == "__main__":
    main()
