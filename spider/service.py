"""The spider as a service: the one entry point the edge calls (`frontier spider`,
`frontier up`). Each crawl runs in a child process (`python -m spider.crawl_process`), for
one source or for every source whose spider interval has elapsed; this parent side never
imports Scrapy or starts a reactor, so it can run any number of crawls, one after another,
from a CLI, a long-running service or a test.

    run_command(settings, source, due=...)   `frontier spider`: open the database, crawl
    run_service(settings, every_s)           `frontier spider --due --every`: run_spider
                                             until SIGTERM/SIGINT
    run_spider(settings, db, dsn, stop=...)  crawl due sources every tick until `stop`
    due_sources(db) / job_for(...) / crawl_in_child(job)   the steps, for tests and benches
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from frontier import migrate
from frontier.connect import database_dsn, open_database
from frontier.db import Database
from frontier.loops import run_every, stop_event
from frontier.settings import Settings
from frontier.sources import SourceRepository
from spider.errors import CrawlFailed, SpiderConfigError
from spider.job import CrawlJob
from spider.state import SpiderRepository
from spider.summary import CrawlSummary

MAX_INTERVAL_HOURS = 525_600 // 60
STOP_GRACE_S = 10.0  # a crawl asked to stop gets this long before it is killed


@dataclass(frozen=True, slots=True)
class CrawlResult:
    summary: CrawlSummary
    exit_code: int  # 0 crawled, 1 the run failed, 2 the source cannot be crawled
    reported: bool = True  # False: the child printed no summary; `summary.error` says why

    @classmethod
    def failed(cls, source: str, exc: CrawlFailed) -> CrawlResult:
        return cls(CrawlSummary(source, error=str(exc)), 1, reported=False)

    def as_json(self) -> dict[str, Any]:
        """The child's summary as it printed it; only source and error if it printed none."""
        if not self.reported:
            return {"source": self.summary.source, "error": self.summary.error}
        return self.summary.as_json()


def job_for(settings: Settings, dsn: str, source: str, **options: Any) -> CrawlJob:
    return CrawlJob(dsn=dsn, source=source, settings=settings.model_dump(mode="json"), **options)


async def crawl_in_child(job: CrawlJob, *, stop: asyncio.Event | None = None) -> CrawlResult:
    """Run `job` in a fresh Python process; its log lines go to our standard error.

    With `stop` (a long-running service), the child runs in a session of its own so a
    terminal's Ctrl-C reaches only the service; once `stop` is set it is sent one SIGTERM
    (Scrapy then closes the crawl and records it) and killed after STOP_GRACE_S."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "spider.crawl_process",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        start_new_session=stop is not None,
    )
    talk = asyncio.ensure_future(child.communicate(job.to_json().encode()))
    if stop is not None:
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait({talk, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if not talk.done():
            child.terminate()
            try:
                await asyncio.wait_for(asyncio.shield(talk), STOP_GRACE_S)
            except TimeoutError:
                child.kill()
    out, _ = await talk
    lines = out.decode("utf-8", "replace").strip().splitlines()
    try:
        summary = json.loads(lines[-1])
        if not isinstance(summary, dict):
            raise ValueError("not an object")
    except (IndexError, ValueError):
        raise CrawlFailed(
            f"the crawl of {job.source!r} exited with status {child.returncode} "
            "without a summary (see the log above)"
        ) from None
    return CrawlResult(CrawlSummary.from_json(summary), child.returncode or 0)


async def configure(
    db: Database,
    source_name: str,
    *,
    interval_hours: float | None = None,
    allow_external: bool | None = None,
    listing_urls: Sequence[str] | None = None,
) -> None:
    """Store a source's spider options (None: unchanged)."""
    if interval_hours is None and allow_external is None and listing_urls is None:
        return
    minutes = None
    if interval_hours is not None:
        if not 0 < interval_hours <= MAX_INTERVAL_HOURS:
            raise SpiderConfigError(
                f"interval: must be over 0 and at most {MAX_INTERVAL_HOURS} hours"
            )
        minutes = max(1, round(interval_hours * 60))
    source = await SourceRepository(db).get(source_name)
    await SpiderRepository(db).configure(
        source.id,
        interval_minutes=minutes,
        allow_external=allow_external,
        listing_urls=listing_urls,
    )


async def due_sources(db: Database, limit: int = 1000) -> list[str]:
    """Names of the due spider/both sources, each claimed (its next run moved ahead)."""
    ids = await SpiderRepository(db).claim_due(limit)
    names = {source.id: source.name for source in await SourceRepository(db).list()}
    return [names[source_id] for source_id in ids if source_id in names]


async def crawl_due(
    settings: Settings,
    db: Database,
    dsn: str,
    *,
    stop: asyncio.Event | None = None,
    on_crawling: Callable[[str], None] | None = None,
    on_crawled: Callable[[str, CrawlSummary], None] | None = None,
) -> list[CrawlResult]:
    """Claim the due sources and crawl each in a child process (stopped with `stop`),
    one after another; a crawl that prints no summary is a result with its error."""
    results = []
    for name in await due_sources(db):
        if stop is not None and stop.is_set():
            break
        if on_crawling:
            on_crawling(name)
        try:
            result = await crawl_in_child(job_for(settings, dsn, name), stop=stop)
        except CrawlFailed as exc:
            result = CrawlResult.failed(name, exc)
        result.summary.log()
        if on_crawled:
            on_crawled(name, result.summary)
        results.append(result)
    return results


async def run_spider(
    settings: Settings,
    db: Database,
    dsn: str,
    *,
    stop: asyncio.Event,
    on_crawling: Callable[[str], None] | None = None,
    on_crawled: Callable[[str, CrawlSummary], None] | None = None,
    on_failed: Callable[[Exception], None] | None = None,
    every_s: float | None = None,
) -> None:
    """Crawl the due sources every `every_s` seconds (default FRONTIER_UP_SPIDER_TICK_S)
    until `stop` is set (the children get the DSN `dsn`); `on_failed` gets a tick that
    failed (default: log)."""

    async def tick() -> None:
        await crawl_due(
            settings, db, dsn, stop=stop, on_crawling=on_crawling, on_crawled=on_crawled
        )

    every = settings.up_spider_tick_s if every_s is None else every_s
    await run_every(stop, tick, every, db.outage, name="spider", on_error=on_failed)


def run_service(
    settings: Settings,
    every_s: float,
    *,
    on_crawled: Callable[[str, CrawlSummary], None] | None = None,
) -> None:
    """`frontier spider --due --every`: crawl the due sources every `every_s` seconds until
    SIGTERM/SIGINT, which stops a running crawl cleanly (the child gets SIGTERM, Scrapy
    closes the crawl and records it) and then returns."""
    with database_dsn(settings) as dsn:
        migrate.make_ready(dsn, embedded=not settings.database_url)

        async def main() -> None:
            async with open_database(dsn, settings) as db, stop_event() as stop:
                await run_spider(
                    settings, db, dsn, stop=stop, on_crawled=on_crawled, every_s=every_s
                )

        asyncio.run(main())


def run_command(
    settings: Settings,
    source: str | None,
    *,
    due: bool,
    max_pages: int | None,
    max_depth: int | None,
    interval_hours: float | None = None,
    allow_external: bool | None = None,
    listing_urls: Sequence[str] | None = None,
    verbose: bool = False,
) -> tuple[list[CrawlResult], int]:
    """`frontier spider`: the results and the exit code (the worst of the runs)."""
    if due == (source is not None):
        raise SpiderConfigError("give either a SOURCE or --due")
    with database_dsn(settings) as dsn:
        migrate.make_ready(dsn, embedded=not settings.database_url)

        async def main() -> list[CrawlResult]:
            async with open_database(dsn, settings) as db:
                if source is not None:
                    await SourceRepository(db).get(source)  # UnknownSource: exit 2 at once
                    await configure(
                        db,
                        source,
                        interval_hours=interval_hours,
                        allow_external=allow_external,
                        listing_urls=listing_urls,
                    )
                    names = [source]
                else:
                    names = await due_sources(db)
            results = []
            for name in names:
                job = job_for(
                    settings,
                    dsn,
                    name,
                    max_pages=max_pages,
                    max_depth=max_depth,
                    log_level="INFO" if verbose else "WARNING",
                )
                try:
                    results.append(await crawl_in_child(job))
                except CrawlFailed as exc:
                    results.append(CrawlResult.failed(name, exc))
            return results

        results = asyncio.run(main())
    return results, max((result.exit_code for result in results), default=0)


def render(result: CrawlResult) -> str:
    return result.summary.render()
