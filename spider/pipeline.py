"""The frontier pipeline: batches the spider's article URLs into `QueueRepository.submit`
(origin `spider`, the link's depth and parent; the queue computes the depth-penalised
priority) and its listing-page checks into `SpiderRepository.save_pages`.

It never blocks the reactor: Scrapy runs on the asyncio reactor, so asyncpg works on the
same event loop. `process_item` only appends to a buffer; a full buffer is written by a
background task (one write at a time, in order; `process_item` waits, without blocking,
only when several batches are already queued). `close_spider` flushes what is left and
waits for every write. While the database is unavailable a write is tried again with
backoff for up to `WRITE_PATIENCE_S` (submits and page upserts are idempotent), holding
the crawl back through the write queue; a write that still fails is counted
(`frontier/submit_errors`) and logged, and the URLs are found again on the next run.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import asyncpg

from frontier.db import Database
from frontier.errors import FrontierError
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy
from frontier.states import Origin
from spider.items import ArticleLink
from spider.state import PageCheck, SpiderRepository

log = logging.getLogger(__name__)

MAX_QUEUED_WRITES = 4  # batches waiting for the database before process_item waits too
WRITE_PATIENCE_S = 120.0  # how long one write waits for an unavailable database

DSN = "FRONTIER_DSN"
BATCH_SIZE = "FRONTIER_BATCH_SIZE"
DEFAULT_DELAY_MS = "FRONTIER_DEFAULT_DELAY_MS"


class FrontierPipeline:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        settings = crawler.settings
        self.dsn: str = settings.get(DSN)
        self.batch_size = settings.getint(BATCH_SIZE, 500)
        self.policy = QueuePolicy(default_delay_ms=settings.getint(DEFAULT_DELAY_MS, 1000))
        self._articles: list[Candidate] = []
        self._pages: list[PageCheck] = []
        self._writes: set[asyncio.Task[None]] = set()
        self._lock = asyncio.Lock()
        self._db: Database | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> FrontierPipeline:
        return cls(crawler)

    def _count(self, key: str, n: int) -> None:
        self.crawler.stats.inc_value(f"frontier/{key}", n)

    async def open_spider(self) -> None:
        self._db = await Database.connect(self.dsn, min_size=1, max_size=2)

    async def process_item(self, item: Any) -> Any:
        if isinstance(item, ArticleLink):
            self._articles.append(
                Candidate(
                    item.href or item.url,
                    source=item.source,
                    origin=Origin.SPIDER,
                    parent_url=item.parent_url,
                    depth=item.depth,
                )
            )
        elif isinstance(item, PageCheck):
            self._pages.append(item)
        if len(self._articles) >= self.batch_size or len(self._pages) >= self.batch_size:
            await self._start_write()
        return item

    async def _start_write(self) -> None:
        articles, pages = self._articles, self._pages
        self._articles, self._pages = [], []
        if not articles and not pages:
            return
        while len(self._writes) >= MAX_QUEUED_WRITES:
            await asyncio.wait(self._writes, return_when=asyncio.FIRST_COMPLETED)
        task = asyncio.ensure_future(self._write(articles, pages))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write(self, articles: list[Candidate], pages: list[PageCheck]) -> None:
        assert self._db is not None
        async with self._lock:
            try:
                await self._write_patiently(self._db, articles, pages)
            except (FrontierError, asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
                self._lost(articles, pages, exc)
            except Exception as exc:
                # Anything else (a driver bug, a broken invariant) is still a failed write:
                # counted, so the run's exit code says so, instead of escaping to Scrapy's
                # close_spider, which logs it and exits 0 as if every URL was written.
                log.exception("unexpected error writing to the frontier")
                self._lost(articles, pages, exc)

    def _lost(self, articles: list[Candidate], pages: list[PageCheck], exc: Exception) -> None:
        self._count("submit_errors", len(articles) + len(pages))
        log.error(
            "could not write %d URLs and %d page checks to the frontier: %s",
            len(articles),
            len(pages),
            exc,
        )

    async def _write_patiently(
        self, db: Database, articles: list[Candidate], pages: list[PageCheck]
    ) -> None:
        left = articles

        async def write() -> None:
            nonlocal left
            if left:
                result = await QueueRepository(db, self.policy).submit(left)
                self._count("new_urls", result.inserted)
                self._count("known_urls", result.known + result.raised)
                self._count("rejected_urls", len(result.rejected))
                left = []  # written: a retry does only what is left
            if pages:
                await SpiderRepository(db).save_pages(self.crawler.spider.plan.source_id, pages)

        await db.outage.ride_out(write, WRITE_PATIENCE_S)

    async def close_spider(self) -> None:
        await self._start_write()
        if self._writes:
            await asyncio.gather(*self._writes)
        if self._db is not None:
            await self._db.close()
