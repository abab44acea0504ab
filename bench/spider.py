"""Benchmark the discovery spider: discovery pages per second with the frontier pipeline
against the same spider with no pipeline, in the same run.

Run ``python -m bench.spider [--quick] [--rounds N]``. A local site (aiohttp, in a thread of
this process, on 127.0.0.1) serves a tree of listing pages: page N links to its ten children
and to ten dated article URLs, so a crawl of 10,000 pages (1,000 with ``--quick``) finds
100,000 article URLs (10,000). The host delay is 0 (the source's rate limit), one request
at a time, as the spider always crawls a host.

Each round runs the real crawl process (``python -m spider.crawl_process``, as `frontier spider`
does) twice on one throwaway embedded server (see `bench.server`):

1. without the pipeline: the same spider, same classification, items dropped;
2. with the frontier pipeline, into a fresh database: every article URL submitted in
   batches, every listing page's state saved, and the run recorded.

Rates use Scrapy's own elapsed time (spider open to spider close, which includes the
pipeline's final flush), so process start-up and reading the plan are left out. The last
line printed is one JSON object with the medians over rounds:
``{"pages": N, "with_pipeline_pages_per_s": ..., "without_pipeline_pages_per_s": ...,
"pipeline_overhead": ..., "rounds": [...]}``. The issue's target is
``pipeline_overhead <= 0.10``.
"""

from __future__ import annotations

import argparse
import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aiohttp import web

from bench.server import emit_result, log, median, running_server
from frontier.db import Database
from frontier.settings import Settings
from frontier.sources import SourceRepository
from frontier.states import IngestionMode
from spider.service import crawl_in_child, job_for

FANOUT = 10  # children per listing page
ARTICLES_PER_PAGE = 10


def _page(number: int, pages: int) -> bytes:
    children = [n for n in range(number * FANOUT + 1, number * FANOUT + FANOUT + 1) if n < pages]
    links = [f'<li><a href="/l/{n}">section {n}</a></li>' for n in children]
    links += [
        f'<li><a href="/2024/{1 + number % 12:02d}/{1 + i:02d}/story-{number}-{i}">story</a></li>'
        for i in range(ARTICLES_PER_PAGE)
    ]
    nav = '<nav><a href="/">home</a> <a href="/l/1">first section</a></nav>'
    return (
        f"<html><head><title>page {number}</title></head><body>{nav}<ul>"
        + "".join(links)
        + "</ul></body></html>"
    ).encode()


@contextmanager
def serving_site(pages: int) -> Iterator[str]:
    """The listing-page tree on 127.0.0.1, served from a thread; yields its origin."""
    bodies = [_page(n, pages) for n in range(pages)]
    loop = asyncio.new_event_loop()
    started = threading.Event()
    state: dict[str, Any] = {}

    async def handler(request: web.Request) -> web.StreamResponse:
        path = request.path
        number = 0 if path == "/" else int(path[3:]) if path.startswith("/l/") else -1
        if not 0 <= number < pages:
            return web.Response(status=404)
        return web.Response(body=bodies[number], content_type="text/html")

    async def start() -> None:
        app = web.Application()
        app.router.add_get("/{tail:.*}", handler)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        state["runner"] = runner
        state["origin"] = f"http://127.0.0.1:{runner.addresses[0][1]}"
        started.set()

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=30)
    started.wait(30)
    try:
        yield state["origin"]
    finally:
        asyncio.run_coroutine_threadsafe(state["runner"].cleanup(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)


async def _add_source(dsn: str, origin: str) -> None:
    db = await Database.connect(dsn, max_size=1)
    try:
        await SourceRepository(db).add(
            "bench",
            base_url=origin + "/",
            mode=IngestionMode.SPIDER,
            rate_limit_ms=0,
            article_patterns=[r"/\d{4}/\d{2}/\d{2}/"],
        )
    finally:
        await db.close()


async def _crawl(settings: Settings, dsn: str, pages: int, *, with_pipeline: bool) -> dict:
    job = job_for(
        settings,
        dsn,
        "bench",
        max_pages=pages,
        max_depth=10,
        with_pipeline=with_pipeline,
        record=with_pipeline,
    )
    result = await crawl_in_child(job)
    summary = result.as_json()
    if summary.get("error") or summary["pages_crawled"] != pages:
        raise SystemExit(f"the crawl went wrong: {summary}")
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 pages instead of 10,000")
    parser.add_argument("--rounds", type=int, default=None, help="default 3 (1 with --quick)")
    args = parser.parse_args()
    pages = 1_000 if args.quick else 10_000
    rounds = args.rounds or (1 if args.quick else 3)
    results = []
    with running_server() as server, serving_site(pages) as origin:
        for round_number in range(1, rounds + 1):
            dsn = server.migrated_database(f"bench_spider_{round_number}")
            settings = Settings.load(database_url=dsn, allow_private_networks=True, _env_file=None)
            asyncio.run(_add_source(dsn, origin))
            log(f"round {round_number}: {pages} pages without the pipeline")
            without = asyncio.run(_crawl(settings, dsn, pages, with_pipeline=False))
            server.checkpoint()
            log(f"round {round_number}: {pages} pages with the frontier pipeline")
            with_ = asyncio.run(_crawl(settings, dsn, pages, with_pipeline=True))
            if with_["new_urls"] != pages * ARTICLES_PER_PAGE:
                raise SystemExit(f"expected {pages * ARTICLES_PER_PAGE} new URLs: {with_}")
            row = {
                "without_pipeline_pages_per_s": round(pages / without["crawl_s"], 1),
                "with_pipeline_pages_per_s": round(pages / with_["crawl_s"], 1),
                "new_urls": with_["new_urls"],
            }
            row["pipeline_overhead"] = round(
                1 - row["with_pipeline_pages_per_s"] / row["without_pipeline_pages_per_s"], 3
            )
            log(f"round {round_number}: {row}")
            results.append(row)
            server.drop_database(f"bench_spider_{round_number}")
    emit_result(
        {
            "benchmark": "spider",
            "pages": pages,
            "article_urls": pages * ARTICLES_PER_PAGE,
            "with_pipeline_pages_per_s": median([r["with_pipeline_pages_per_s"] for r in results]),
            "without_pipeline_pages_per_s": median(
                [r["without_pipeline_pages_per_s"] for r in results]
            ),
            "pipeline_overhead": median([r["pipeline_overhead"] for r in results]),
            "target_overhead": 0.10,
            "rounds": results,
        }
    )


if __name__ == "__main__":
    main()
