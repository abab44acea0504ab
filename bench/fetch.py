"""Benchmark the fetcher end to end against Scrapy on the same local site.

Run ``python -m bench.fetch [--quick] [--concurrency C]``.

The site: 20,000 distinct article pages (about 6 KB of HTML each) over 200 loopback hosts,
127.0.0.10 upwards (``--quick``: 2,000 pages over 20 hosts), served by a separate process
(aiohttp); robots.txt answers 404. Politeness delay 0.

Each fetcher run starts from a fresh database (copied from a migrated template) with the
URL list submitted, then runs ``--until-idle`` fetch processes (claim, robots.txt, fetch,
extract, PostgreSQL sink, complete, fetch_log) to completion; pages/s is URLs fetched per
second of wall time of the slowest process; peak RSS is each process's VmHWM.

1. ours, 1 process, extraction off   vs  Scrapy, no pipeline
2. ours, 1 process, full pipeline    vs  Scrapy + a trafilatura item pipeline
3. ours, 2 processes, full pipeline

Scrapy crawls the same URL list at the same concurrency (CONCURRENT_REQUESTS and
CONCURRENT_REQUESTS_PER_DOMAIN = C, no delay, ROBOTSTXT_OBEY on as ours is, no storage).
The last stdout line is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.server import Measured, emit_result, log, run_measured, running_server

ROOT = Path(__file__).resolve().parents[1]
PORT = 18_080
WORDS = (
    "market",
    "policy",
    "city",
    "council",
    "river",
    "season",
    "report",
    "energy",
    "school",
    "health",
    "court",
    "transport",
    "budget",
    "museum",
    "festival",
    "harbour",
    "election",
    "weather",
    "science",
    "library",
)


def page_html(host: int, page: int) -> str:
    seed = hashlib.sha256(f"{host}/{page}".encode()).digest()
    paragraphs = []
    for p in range(8):
        words = [WORDS[(seed[(p * 7 + i) % 32] + i * p) % len(WORDS)] for i in range(60)]
        paragraphs.append(f"<p>Story {host}-{page}, part {p}: {' '.join(words)}.</p>")
    return (
        f"<!doctype html><html lang='en'><head><title>Story {host}-{page}</title>"
        f"<meta name='author' content='Desk {host}'></head><body><nav>home news sport"
        f"</nav><article><h1>Story {host}-{page}</h1>{''.join(paragraphs)}</article>"
        f"<footer>copyright the bench</footer></body></html>"
    )


def addresses(hosts: int) -> list[str]:
    return [f"127.0.{10 + i // 250}.{10 + i % 250}" for i in range(hosts)]


def url_list(hosts: int, pages: int) -> list[str]:
    per_host = pages // hosts
    return [
        f"http://{address}:{PORT}/a/{p}" for address in addresses(hosts) for p in range(per_host)
    ]


# -- the site (a separate process) ---------------------------------------------------------


async def serve_site(hosts: int) -> None:
    from aiohttp import web

    async def article(request: web.Request) -> web.Response:
        host = addresses(hosts).index(request.host.split(":")[0])
        return web.Response(
            text=page_html(host, int(request.match_info["n"])), content_type="text/html"
        )

    app = web.Application()
    app.router.add_get("/a/{n}", article)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    for address in addresses(hosts):
        await web.TCPSite(runner, address, PORT, backlog=1024).start()
    print("ready", flush=True)
    await asyncio.Event().wait()


# -- our fetcher as a bench worker (extraction can be switched off) -------------------------


def run_worker(dsn: str, concurrency: int, extract: bool) -> None:
    from fetcher.service import run_fetcher
    from frontier.connect import open_database
    from frontier.settings import Settings

    settings = Settings.load(
        database_url=dsn,
        allow_private_networks=True,
        fetch_concurrency=concurrency,
        db_pool_size=4,
        _env_file=None,
    )

    async def main() -> None:
        async with open_database(dsn, settings) as db:
            summary = await run_fetcher(settings, db, until_idle=True, extract=extract)
            print(f"pages {summary.pages}", flush=True)

    asyncio.run(main())


# -- Scrapy on the same URL list -------------------------------------------------------------


def run_scrapy(url_file: str, concurrency: int, with_trafilatura: bool) -> None:
    import scrapy
    from scrapy.crawler import CrawlerProcess

    urls = Path(url_file).read_text().split()

    class Extract:
        def process_item(self, item: dict[str, Any], spider: Any = None) -> dict[str, Any]:
            import trafilatura

            doc = trafilatura.bare_extraction(item.pop("html"), url=item["url"], with_metadata=True)
            item["title"] = getattr(doc, "title", None)
            item["body"] = getattr(doc, "text", None)
            return item

    class Pages(scrapy.Spider):
        name = "pages"

        async def start(self) -> Any:
            for url in urls:
                yield scrapy.Request(url, dont_filter=True)

        def parse(self, response: Any) -> Any:
            if with_trafilatura:
                yield {"url": response.url, "html": response.text}

    settings: dict[str, Any] = {
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": True,
        "LOG_LEVEL": "WARNING",
        "TELNETCONSOLE_ENABLED": False,
        "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False,
        "USER_AGENT": "frontier-bench/1.0",
    }
    if with_trafilatura:
        module = sys.modules[__name__]
        module.Extract = Extract  # type: ignore[attr-defined]
        settings["ITEM_PIPELINES"] = {f"{__name__}.Extract": 100}
    process = CrawlerProcess(settings)
    process.crawl(Pages)
    process.start()


# -- the driver ------------------------------------------------------------------------------


def submit_urls(dsn: str, urls: list[str]) -> None:
    from frontier.db import Database
    from frontier.queue import Candidate, QueuePolicy, QueueRepository, SourceRef
    from frontier.states import Origin

    async def main() -> None:
        db = await Database.connect(dsn)
        try:
            source = await db.fetchval("SELECT id FROM sources WHERE name = 'manual'")
            queue = QueueRepository(db, QueuePolicy(default_delay_ms=0))
            ref = SourceRef(source, rate_limit_ms=0)
            for start in range(0, len(urls), 5000):
                await queue.submit(
                    [Candidate(u, ref, Origin.MANUAL) for u in urls[start : start + 5000]]
                )
        finally:
            await db.close()

    asyncio.run(main())


def fetched(dsn: str) -> int:
    import psycopg

    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT count(*) FROM url_frontier WHERE status = 'fetched'").fetchone()
    return int(row[0]) if row else 0


def parallel(commands: list[list[str]]) -> list[Measured]:
    results: list[Measured | None] = [None] * len(commands)

    def one(i: int) -> None:
        results[i] = run_measured(commands[i], cwd=ROOT)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(commands))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [r for r in results if r is not None]


def ours(
    server: Any, name: str, urls: list[str], processes: int, concurrency: int, extract: bool
) -> dict[str, Any]:
    dsn = server.migrated_database(name)
    submit_urls(dsn, urls)
    server.checkpoint()
    command = [
        sys.executable,
        "-m",
        "bench.fetch",
        "--worker",
        dsn,
        "--concurrency",
        str(concurrency),
    ] + ([] if extract else ["--no-extract"])
    log(f"{name}: {processes} process(es), extraction {'on' if extract else 'off'}")
    runs = parallel([command] * processes)
    for run in runs:
        if run.returncode:
            raise RuntimeError(f"fetch worker failed:\n{run.stderr[-3000:]}")
    done = fetched(dsn)
    wall = max(run.wall_s for run in runs)
    server.drop_database(name)
    result = {
        "pages": done,
        "wall_s": round(wall, 2),
        "pages_per_s": round(done / wall, 1),
        "peak_rss_mib": [round(run.peak_rss_mib, 1) for run in runs],
    }
    log(f"{name}: {result}")
    if done != len(urls):
        raise RuntimeError(f"{name}: fetched {done} of {len(urls)}")
    return result


def scrapy_run(url_file: str, count: int, concurrency: int, extract: bool) -> dict[str, Any]:
    command = [
        sys.executable,
        "-m",
        "bench.fetch",
        "--scrapy",
        url_file,
        "--concurrency",
        str(concurrency),
    ] + (["--trafilatura"] if extract else [])
    log(f"scrapy: trafilatura {'on' if extract else 'off'}")
    run = run_measured(command, cwd=ROOT)
    if run.returncode:
        raise RuntimeError(f"scrapy failed:\n{run.stderr[-3000:]}")
    result = {
        "pages": count,
        "wall_s": round(run.wall_s, 2),
        "pages_per_s": round(count / run.wall_s, 1),
        "peak_rss_mib": round(run.peak_rss_mib, 1),
    }
    log(f"scrapy: {result}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--worker", metavar="DSN")
    parser.add_argument("--no-extract", action="store_true")
    parser.add_argument("--scrapy", metavar="URL_FILE")
    parser.add_argument("--trafilatura", action="store_true")
    parser.add_argument("--serve", type=int, metavar="HOSTS")
    args = parser.parse_args()
    if args.worker:
        return run_worker(args.worker, args.concurrency, not args.no_extract)
    if args.scrapy:
        return run_scrapy(args.scrapy, args.concurrency, args.trafilatura)
    if args.serve:
        return asyncio.run(serve_site(args.serve))

    hosts, pages = (20, 2_000) if args.quick else (200, 20_000)
    urls = url_list(hosts, pages)
    site = subprocess.Popen(
        [sys.executable, "-m", "bench.fetch", "--serve", str(hosts)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert site.stdout is not None
        if site.stdout.readline().strip() != "ready":
            raise RuntimeError("the site did not start (do 127.0.x.y addresses bind here?)")
        log(f"site: {len(urls)} pages over {hosts} loopback hosts")
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
            handle.write("\n".join(urls))
            url_file = handle.name
        c = args.concurrency
        with running_server() as server:
            no_extract = ours(server, "fetch_raw", urls, 1, c, extract=False)
            full_one = ours(server, "fetch_full1", urls, 1, c, extract=True)
            full_two = ours(server, "fetch_full2", urls, 2, c, extract=True)
        scrapy_raw = scrapy_run(url_file, len(urls), c, extract=False)
        scrapy_full = scrapy_run(url_file, len(urls), c, extract=True)
        os.unlink(url_file)
    finally:
        site.terminate()
        site.wait()
    emit_result(
        {
            "pages": len(urls),
            "hosts": hosts,
            "concurrency": c,
            "quick": args.quick,
            "ours_no_extraction_1p": no_extract,
            "ours_full_1p": full_one,
            "ours_full_2p": full_two,
            "scrapy_no_pipeline": scrapy_raw,
            "scrapy_trafilatura": scrapy_full,
            "ratio_no_extraction": round(no_extract["pages_per_s"] / scrapy_raw["pages_per_s"], 2),
            "ratio_full": round(full_one["pages_per_s"] / scrapy_full["pages_per_s"], 2),
            "peak_rss_mib_max": max(
                full_one["peak_rss_mib"] + full_two["peak_rss_mib"] + no_extract["peak_rss_mib"]
            ),
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
    )


if __name__ == "__main__":
    main()
