"""Benchmark the fetcher end to end against Scrapy on the same local site.

Run ``python -m bench.fetch [--quick] [--concurrency C] [--set standard|small]``.

The site serves two page sets, each 20,000 distinct pages over 200 loopback hosts,
127.0.0.10 upwards (``--quick``: 2,000 pages over 20 hosts): files served by nginx with
one worker when nginx is installed (as the issue measured; ``--site aiohttp`` or no nginx:
pages made on request by an aiohttp process, which costs the shared cores about as much
CPU per page as a fetcher); robots.txt answers 404; politeness delay 0:

- ``standard``: the original pages, about 6 KB of HTML (3 KB of article text) each;
- ``small``: news-like pages, about 6 KB of article text in an ``<article>`` with a byline
  and ``<time>``, inside a header nav, an aside of related links and a footer, with the
  OpenGraph, ``article:*`` and JSON-LD ``NewsArticle`` a CMS writes into the head.

Each of our runs starts from a fresh database (copied from a migrated template) with the
URL list submitted, then runs one ``frontier fetch --until-idle`` process (claim,
robots.txt, fetch, extract, PostgreSQL sink, complete, fetch_log) to completion; pages/s
is URLs fetched per second of wall time; peak RSS is the process's VmHWM and, for the
tree, the largest sum of the RSS of the process and its extraction workers at one time.
Every run reports ``steal_s``, the CPU time the hypervisor took from this machine while it
ran (all CPUs): on a shared VM, a run in stolen time is slower than the code.

On each set, at the same concurrency:

1. ours, ``FRONTIER_EXTRACT_PROCESSES=0`` (extraction in a thread of the fetch process)
2. ours, the default extraction pool (one worker process per usable core)
3. Scrapy with ``trafilatura.extract`` in its callback (what a Scrapy project would write)
4. Scrapy with ``trafilatura.bare_extraction(with_metadata=True)`` in its callback (the
   metadata we store too)

and on the standard set, ours with extraction off against Scrapy with no callback work.
Scrapy crawls the same URL list (CONCURRENT_REQUESTS and CONCURRENT_REQUESTS_PER_DOMAIN =
C, no delay, ROBOTSTXT_OBEY on as ours is, no storage). The last stdout line is one JSON
object with every figure; the ratios are ours over Scrapy + ``trafilatura.extract``.

These runs keep no WARC archive (``FRONTIER_ARCHIVE=false``: Scrapy keeps none either).
``--archive-compare`` measures what the archive costs instead (issue 30): ours with the
default pool, archiving off and on in turn (``--rounds`` each, 3 by default), on the first
page set; it reports each one's median pages/s and CPU per page, on over off, and the
archive's bytes on disk per page.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.server import emit_result, log, median, run_measured, running_server

ROOT = Path(__file__).resolve().parents[1]
# Another port when another run of this benchmark holds 18080 on the same machine.
PORT = int(os.environ.get("BENCH_FETCH_PORT", "18080"))
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


VOCABULARY = (
    *WORDS,
    "the",
    "said",
    "residents",
    "officials",
    "announced",
    "yesterday",
    "according",
    "to",
    "plans",
    "which",
    "would",
    "change",
    "for",
    "years",
    "local",
    "new",
    "and",
    "in",
    "of",
    "a",
)
NAV = "".join(f"<li><a href='/section/{w}'>{w.title()}</a></li>" for w in WORDS[:14])


def news_page_html(host: int, page: int) -> str:
    """A news article as a CMS renders it: about 6 KB of article text."""
    seed = hashlib.sha256(f"news {host}/{page}".encode()).digest()
    paragraphs = []
    for p in range(12):
        words = [
            VOCABULARY[(seed[(p * 11 + i) % 32] * (i + 1) + p) % len(VOCABULARY)] for i in range(72)
        ]
        paragraphs.append(f"<p>Report {host}-{page}.{p}: {' '.join(words)}.</p>")
    title = f"Council {host} weighs plan {page} for the harbour"
    related = "".join(
        f"<li><a href='/s/{page + k}'>Related story {host}-{page + k}</a></li>" for k in range(1, 9)
    )
    published = f"2026-03-{1 + page % 28:02d}T08:{page % 60:02d}:00+01:00"
    image = f"https://img.example/{host}/{page}.jpg"
    jsonld = (
        '{"@context": "https://schema.org", "@type": "NewsArticle", '
        f'"headline": "{title}", "datePublished": "{published}", '
        f'"author": {{"@type": "Person", "name": "Desk {host}"}}, "image": "{image}"}}'
    )
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title} | "
        f"The Bench Gazette</title><meta name='description' content='{title}.'>"
        f"<meta property='og:title' content='{title}'>"
        f"<meta property='og:type' content='article'><meta property='og:image' "
        f"content='{image}'><meta property='article:published_time' content='{published}'>"
        f"<meta name='author' content='Desk {host}'>"
        f"<script type='application/ld+json'>{jsonld}</script>"
        f"<link rel='stylesheet' href='/static/site.css'></head><body>"
        f"<header><a href='/'>The Bench Gazette</a><nav><ul>{NAV}</ul></nav>"
        f"<form action='/search'><input name='q'></form></header><main>"
        f"<article><h1>{title}</h1><p class='byline'>By Desk {host}, "
        f"<time datetime='{published}'>March {1 + page % 28}, 2026</time></p>"
        f"{''.join(paragraphs)}<ul class='tags'><li>harbour</li><li>council</li></ul>"
        f"</article><aside><h2>Most read</h2><ul>{related}</ul>"
        f"<div class='ad'>Advertisement</div></aside></main><footer><nav><ul>{NAV}</ul>"
        f"</nav><p>Copyright 2026 The Bench Gazette. All rights reserved. "
        f"<a href='/privacy'>Privacy</a> <a href='/terms'>Terms</a></p></footer>"
        f"</body></html>"
    )


# page set -> the prefix of its paths on every host, and its page builder
PAGE_SETS = {"standard": ("/a/", page_html), "small": ("/s/", news_page_html)}


def addresses(hosts: int) -> list[str]:
    return [f"127.0.{10 + i // 250}.{10 + i % 250}" for i in range(hosts)]


def url_list(hosts: int, pages: int, page_set: str = "standard") -> list[str]:
    prefix = PAGE_SETS[page_set][0]
    per_host = pages // hosts
    return [
        f"http://{address}:{PORT}{prefix}{p}"
        for address in addresses(hosts)
        for p in range(per_host)
    ]


# -- the site (a separate process) ---------------------------------------------------------

# nginx, where Debian puts it (/usr/sbin is not on every user's PATH)
NGINX_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])


@contextmanager
def nginx_site(nginx: str, hosts: int, pages: int, sets: list[str]) -> Iterator[None]:
    """The pages written out as files and served by nginx with one worker, as the issue
    measured them: a static server costs a small share of the cores the fetchers are
    measured on (the aiohttp site spends about as much CPU per page as a fetcher)."""
    with tempfile.TemporaryDirectory(prefix="bench-site-") as directory:
        root = Path(directory)
        root.chmod(0o755)  # nginx's workers run as another user when started by root
        per_host = pages // hosts
        servers = []
        for index, address in enumerate(addresses(hosts)):
            for page_set in sets:
                prefix, build = PAGE_SETS[page_set]
                folder = root / "hosts" / str(index) / prefix.strip("/")
                folder.mkdir(parents=True, exist_ok=True)
                for page in range(per_host):
                    (folder / str(page)).write_text(build(index, page), encoding="utf-8")
            servers.append(
                f"server {{ listen {address}:{PORT} backlog=1024; root {root}/hosts/{index}; }}"
            )
        for path in root.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        (root / "nginx.conf").write_text(
            "daemon off; worker_processes 1; pid nginx.pid; error_log stderr warn;\n"
            "events { worker_connections 4096; }\n"
            "http { access_log off; log_not_found off; default_type text/html; sendfile on;\n"
            "keepalive_requests 1000000; keepalive_timeout 120s;\n"
            "client_body_temp_path tmp; proxy_temp_path tmp; fastcgi_temp_path tmp;\n"
            "uwsgi_temp_path tmp; scgi_temp_path tmp;\n" + "\n".join(servers) + "\n}\n",
            encoding="utf-8",
        )
        (root / "tmp").mkdir()
        process = subprocess.Popen(
            [nginx, "-p", str(root), "-c", str(root / "nginx.conf"), "-e", "stderr"]
        )
        try:
            first = f"http://{addresses(hosts)[0]}:{PORT}/robots.txt"
            deadline = time.monotonic() + 10
            while not _answers(first):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("nginx did not start (do 127.0.x.y addresses bind here?)")
                time.sleep(0.05)  # polling a server's start-up, with a deadline
            yield
        finally:
            process.terminate()
            process.wait()


def _answers(url: str) -> bool:
    try:
        urllib.request.urlopen(url, timeout=1)
    except urllib.error.HTTPError:
        return True  # an answer (robots.txt: 404)
    except OSError:
        return False
    return True


@contextmanager
def aiohttp_site(hosts: int) -> Iterator[None]:
    """The pages made on request by an aiohttp process (`--serve`), where nginx is missing."""
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
        yield
    finally:
        site.terminate()
        site.wait()


async def serve_site(hosts: int) -> None:
    from aiohttp import web

    index = {address: i for i, address in enumerate(addresses(hosts))}

    def serving(build: Any) -> Any:
        async def article(request: web.Request) -> web.Response:
            host = index[request.host.split(":")[0]]
            return web.Response(
                text=build(host, int(request.match_info["n"])), content_type="text/html"
            )

        return article

    app = web.Application()
    for prefix, build in PAGE_SETS.values():
        app.router.add_get(prefix + "{n}", serving(build))
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


def run_scrapy(url_file: str, concurrency: int, extraction: str) -> None:
    """Scrapy over the URL list; `extraction`: none, extract (`trafilatura.extract` in the
    callback) or bare (`trafilatura.bare_extraction(with_metadata=True)` there)."""
    import scrapy
    import trafilatura
    from scrapy.crawler import CrawlerProcess

    urls = Path(url_file).read_text().split()

    class Pages(scrapy.Spider):
        name = "pages"

        async def start(self) -> Any:
            for url in urls:
                yield scrapy.Request(url, dont_filter=True)

        def parse(self, response: Any) -> Any:
            if extraction == "extract":
                yield {"url": response.url, "body": trafilatura.extract(response.text)}
            elif extraction == "bare":
                doc = trafilatura.bare_extraction(
                    response.text, url=response.url, with_metadata=True
                )
                yield {"url": response.url, "title": doc.title, "body": doc.text}

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
    process = CrawlerProcess(settings)
    process.crawl(Pages)
    process.start()


# -- the driver ------------------------------------------------------------------------------


def submit_urls(dsn: str, urls: list[str]) -> None:
    from frontier.db import Database
    from frontier.queue import QueueRepository
    from frontier.queue_values import Candidate, QueuePolicy, SourceRef
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


def fetch_env(dsn: str, concurrency: int) -> dict[str, str]:
    """The environment of a `frontier` process of the benchmark: this one's, without its
    FRONTIER_ settings, and the benchmark's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    env.update(
        FRONTIER_DATABASE_URL=dsn,
        FRONTIER_ALLOW_PRIVATE_NETWORKS="true",
        FRONTIER_FETCH_CONCURRENCY=str(concurrency),
        FRONTIER_DB_POOL_SIZE="4",
        FRONTIER_USER_AGENT="frontier-bench/1.0",
    )
    return env


def ours(
    server: Any,
    name: str,
    urls: list[str],
    concurrency: int,
    *,
    extract: bool = True,
    extract_processes: int | None = None,
    archive_dir: Path | None = None,
) -> dict[str, Any]:
    """One fetch process over `urls` from a fresh database: `frontier fetch --until-idle`
    (`extract_processes` None: its default pool), or the bench worker, extraction off.
    `archive_dir`: the WARC archive's directory (None: no archive)."""
    dsn = server.migrated_database(name)
    submit_urls(dsn, urls)
    server.checkpoint()
    if extract:
        command = [sys.executable, "-m", "frontier", "fetch", "--until-idle"]
    else:
        command = [sys.executable, "-m", "bench.fetch", "--worker", dsn, "--no-extract"]
        command += ["--concurrency", str(concurrency)]
    env = fetch_env(dsn, concurrency)
    if extract_processes is not None:
        env["FRONTIER_EXTRACT_PROCESSES"] = str(extract_processes)
    if archive_dir is None:
        env["FRONTIER_ARCHIVE"] = "false"
    else:
        env["FRONTIER_ARCHIVE_DIR"] = str(archive_dir)
    shown = "default" if extract_processes is None else extract_processes
    log(f"{name}: 1 process, " + (f"extraction processes {shown}" if extract else "no extraction"))
    server_cpu = server.cpu_s()
    run = run_measured(command, env=env, cwd=ROOT)
    if run.returncode:
        raise RuntimeError(f"fetch process failed:\n{run.stderr[-3000:]}")
    after = server.cpu_s()
    done = fetched(dsn)
    server.drop_database(name)
    result = {
        "pages": done,
        "wall_s": round(run.wall_s, 2),
        "pages_per_s": round(done / run.wall_s, 1),
        "peak_rss_mib": round(run.peak_rss_mib, 1),
        "tree_peak_rss_mib": round(run.tree_peak_rss_mib, 1),
        **cpu_per_page(run.cpu_s, done),
        "steal_s": round(run.steal_s, 1),
    }
    if server_cpu is not None and after is not None:
        result["postgres_cpu_ms_per_page"] = round(1000 * (after - server_cpu) / done, 3)
    log(f"{name}: {result}")
    if done != len(urls):
        raise RuntimeError(f"{name}: fetched {done} of {len(urls)}")
    return result


def cpu_per_page(cpu_s: float, pages: int) -> dict[str, float]:
    """The process tree's CPU per page: the figure that other load on the machine hardly
    moves, where pages/s on a shared machine moves by a third."""
    return {"cpu_ms_per_page": round(1000 * cpu_s / max(pages, 1), 3)}


def scrapy_run(url_file: str, count: int, concurrency: int, extraction: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.fetch", "--scrapy", url_file]
    command += ["--concurrency", str(concurrency), "--extraction", extraction]
    log(f"scrapy: extraction {extraction}")
    run = run_measured(command, cwd=ROOT)
    if run.returncode:
        raise RuntimeError(f"scrapy failed:\n{run.stderr[-3000:]}")
    result = {
        "pages": count,
        "wall_s": round(run.wall_s, 2),
        "pages_per_s": round(count / run.wall_s, 1),
        "peak_rss_mib": round(run.peak_rss_mib, 1),
        **cpu_per_page(run.cpu_s, count),
        "steal_s": round(run.steal_s, 1),
    }
    log(f"scrapy: {result}")
    return result


def archive_compare(
    server: Any, page_set: str, hosts: int, pages: int, c: int, rounds: int
) -> dict[str, Any]:
    """Ours with the default pool, archiving off and on in turn, `rounds` times each."""
    urls = url_list(hosts, pages, page_set)
    runs: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
    disk: list[float] = []
    for n in range(rounds):
        runs["off"].append(ours(server, f"archive_off_{n}", urls, c))
        with tempfile.TemporaryDirectory(prefix="bench-archive-") as directory:
            run = ours(server, f"archive_on_{n}", urls, c, archive_dir=Path(directory))
            size = sum(f.stat().st_size for f in Path(directory).iterdir())
            disk.append(size / run["pages"])
            runs["on"].append(run)
    result: dict[str, Any] = {}
    for mode, measured in runs.items():
        result[f"archive_{mode}"] = {
            "pages_per_s": [r["pages_per_s"] for r in measured],
            "median_pages_per_s": median([r["pages_per_s"] for r in measured]),
            "median_cpu_ms_per_page": median([r["cpu_ms_per_page"] for r in measured]),
            "steal_s": [r["steal_s"] for r in measured],
        }
    on, off = result["archive_on"], result["archive_off"]
    result["on_over_off_pages_per_s"] = round(
        on["median_pages_per_s"] / off["median_pages_per_s"], 3
    )
    result["on_over_off_cpu_per_page"] = round(
        on["median_cpu_ms_per_page"] / off["median_cpu_ms_per_page"], 3
    )
    result["archive_bytes_per_page"] = round(median(disk))
    log(f"archive: {result}")
    return result


def one_set(server: Any, page_set: str, hosts: int, pages: int, c: int) -> dict[str, Any]:
    """Every run on one page set, at concurrency `c`."""
    urls = url_list(hosts, pages, page_set)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
        handle.write("\n".join(urls))
        url_file = handle.name
    runs: dict[str, Any] = {}
    try:
        if page_set == "standard":
            runs["ours_no_extraction"] = ours(server, "fetch_raw", urls, c, extract=False)
            runs["scrapy_no_callback"] = scrapy_run(url_file, len(urls), c, "none")
        runs["ours_in_process"] = ours(server, "fetch_thread", urls, c, extract_processes=0)
        runs["ours_pool"] = ours(server, "fetch_pool", urls, c)
        runs["scrapy_extract"] = scrapy_run(url_file, len(urls), c, "extract")
        runs["scrapy_bare_extraction"] = scrapy_run(url_file, len(urls), c, "bare")
    finally:
        os.unlink(url_file)
    scrapy = runs["scrapy_extract"]["pages_per_s"]
    runs["ratio_in_process"] = round(runs["ours_in_process"]["pages_per_s"] / scrapy, 2)
    runs["ratio_pool"] = round(runs["ours_pool"]["pages_per_s"] / scrapy, 2)
    runs["ratio_pool_vs_bare"] = round(
        runs["ours_pool"]["pages_per_s"] / runs["scrapy_bare_extraction"]["pages_per_s"], 2
    )
    # CPU per page, ours with the PostgreSQL server's share: Scrapy's over ours is how many
    # times the pages ours fetches on the same cores, whatever else runs on the machine
    scrapy_cpu = runs["scrapy_extract"]["cpu_ms_per_page"]
    for mode in ("in_process", "pool"):
        ours_run = runs[f"ours_{mode}"]
        ours_cpu = ours_run["cpu_ms_per_page"] + ours_run.get("postgres_cpu_ms_per_page", 0.0)
        runs[f"cpu_ratio_{mode}"] = round(scrapy_cpu / ours_cpu, 2)
    if "ours_no_extraction" in runs:
        raw = runs["ours_no_extraction"]["pages_per_s"]
        runs["ratio_no_extraction"] = round(raw / runs["scrapy_no_callback"]["pages_per_s"], 2)
    log(
        f"{page_set}: in-process {runs['ratio_in_process']}x and pool {runs['ratio_pool']}x "
        f"Scrapy + trafilatura.extract; pool tree peak RSS "
        f"{runs['ours_pool']['tree_peak_rss_mib']} MiB"
    )
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--set", choices=sorted(PAGE_SETS), help="only this page set")
    parser.add_argument("--worker", metavar="DSN")
    parser.add_argument("--no-extract", action="store_true")
    parser.add_argument("--scrapy", metavar="URL_FILE")
    parser.add_argument("--extraction", choices=("none", "extract", "bare"), default="none")
    parser.add_argument("--serve", type=int, metavar="HOSTS")
    parser.add_argument(
        "--archive-compare",
        action="store_true",
        help="only ours, WARC archive off and on in turn (issue 30)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="--archive-compare runs each")
    parser.add_argument(
        "--site",
        choices=("auto", "nginx", "aiohttp"),
        default="auto",
        help="what serves the pages: nginx when installed (auto), else an aiohttp process",
    )
    args = parser.parse_args()
    if args.worker:
        return run_worker(args.worker, args.concurrency, not args.no_extract)
    if args.scrapy:
        return run_scrapy(args.scrapy, args.concurrency, args.extraction)
    if args.serve:
        return asyncio.run(serve_site(args.serve))

    hosts, pages = (20, 2_000) if args.quick else (200, 20_000)
    sets = [args.set] if args.set else ["standard", "small"]
    nginx = None if args.site == "aiohttp" else shutil.which("nginx", path=NGINX_PATH)
    if args.site == "nginx" and nginx is None:
        parser.error("--site nginx: no nginx found (Debian: apt-get install nginx)")
    serving = nginx_site(nginx, hosts, pages, sets) if nginx else aiohttp_site(hosts)
    with serving:
        site = "nginx" if nginx else "aiohttp"
        log(f"site ({site}): {pages} pages per set over {hosts} loopback hosts; sets {sets}")
        with running_server() as server:
            if args.archive_compare:
                compared = archive_compare(
                    server, sets[0], hosts, pages, args.concurrency, args.rounds
                )
                emit_result({"pages": pages, "set": sets[0], "site": site, **compared})
                return
            results = {s: one_set(server, s, hosts, pages, args.concurrency) for s in sets}
    emit_result(
        {
            "pages": pages,
            "hosts": hosts,
            "concurrency": args.concurrency,
            "usable_cores": len(os.sched_getaffinity(0)),
            "quick": args.quick,
            "site": site,
            **results,
            "pool_tree_peak_rss_mib_max": max(
                r["ours_pool"]["tree_peak_rss_mib"] for r in results.values()
            ),
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
    )


if __name__ == "__main__":
    main()
