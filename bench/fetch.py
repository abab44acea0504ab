"""Benchmark the fetcher end to end against Scrapy on the same local site.

Run ``python -m bench.fetch [--quick] [--concurrency C] [--set standard|small|large]``.

The site serves three page sets over loopback hosts, 127.0.0.10 upwards: the first two
20,000 distinct pages each over 200 hosts (``--quick``: 2,000 pages over 20 hosts), the
third 10,000 over 50 hosts (``--quick``: 1,000); files served by nginx with
one worker when nginx is installed (as the issue measured; ``--site aiohttp`` or no nginx:
pages made on request by an aiohttp process, which costs the shared cores about as much
CPU per page as a fetcher); robots.txt answers 404; politeness delay 0:

- ``standard``: the original pages, about 6 KB of HTML (3 KB of article text) each;
- ``small``: news-like pages, about 6 KB of article text in an ``<article>`` with a byline
  and ``<time>``, inside a header nav, an aside of related links and a footer, with the
  OpenGraph, ``article:*`` and JSON-LD ``NewsArticle`` a CMS writes into the head;
- ``large`` (issue 29): about 100 KB news pages, of which 15-20 KB is the article's text
  and the rest heavy furniture (inline CSS, analytics and application-state scripts,
  JSON-LD, a mega-menu, related cards, comments), always at LARGE_CONCURRENCY in flight.

Each of our runs starts from a fresh database (copied from a migrated template) with the
URL list submitted, then runs one ``frontier fetch --until-idle`` process (claim,
robots.txt, fetch, extract, PostgreSQL sink, complete, fetch_log) to completion; pages/s
is URLs fetched per second of wall time; peak RSS is the process's VmHWM and, for the
tree, the largest sum of the RSS of the process and its extraction workers at one time.
Every run reports ``steal_s``, the CPU time the hypervisor took from this machine while it
ran (all CPUs): on a shared VM, a run in stolen time is slower than the code.

On each set, ours and Scrapy at the same concurrency:

1. ours, ``FRONTIER_EXTRACT_PROCESSES=0`` (extraction in a thread of the fetch process)
2. ours, the default extraction pool (one worker process per usable core)
3. Scrapy with ``trafilatura.extract`` in its callback (what a Scrapy project would write)
4. Scrapy with ``trafilatura.bare_extraction(with_metadata=True)`` in its callback (the
   metadata we store too)

and on the standard set, ours with extraction off against Scrapy with no callback work.
Scrapy crawls the same URL list (CONCURRENT_REQUESTS and CONCURRENT_REQUESTS_PER_DOMAIN =
C, no delay, ROBOTSTXT_OBEY on as ours is, no storage). The last stdout line is one JSON
object with every figure; the ratios are ours over Scrapy + ``trafilatura.extract``.

The database is a throwaway embedded PostgreSQL tuned for the machine (bench/server.py), or,
with ``--dsn`` (a superuser's DSN, URL form), an existing server: the benchmark makes its
own databases there and drops them afterwards, and logs the settings that differ from the
embedded server's. PostgreSQL's CPU per page is measured when that server runs on this
machine and its data directory can be read. A distribution's build, which has LZ4 for the
copies of a document's text (migration 0048) where the embedded wheel's has only pglz::

    .ci/with-postgres 15 sh -c 'python -m bench.fetch --lean --dsn "$FRONTIER_TEST_DATABASE_URL"'

(with PG_SERVER_OPTIONS holding bench/server.py's SERVER_SETTINGS as ``-c`` options, so
that the settings are the same and only the build and version differ; bench/RESULTS.md,
seventeenth session).

These runs keep no WARC archive (``FRONTIER_ARCHIVE=false``: Scrapy keeps none either).
``--archive-compare`` measures what the archive costs instead (issue 30): ours with the
default pool, archiving off and on in turn (``--rounds`` each, 3 by default), on the first
page set; it reports each one's median pages/s and CPU per page, on over off, and the
archive's bytes on disk per page. ``--outbox-compare`` measures the outbox of issue 33
the same way: the bench worker (the default extraction pool; ``--extract-processes 0``:
extraction in a thread of the fetch process) with PostgreSQL alone, then with
PostgreSQL required and a webhook optional (a receiver in this process that checks each
signature), in turn; every document must reach the receiver, once, by the end of its run.
With ``--outage`` the receiver is down for the whole crawl (its port refuses connections,
as a stopped service's does) and comes up after it: the crawl is measured with the sink
down, then a delivery process drains the outbox, and every document must arrive once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from bench.server import benchmark_server, emit_result, log, median, run_measured

ROOT = Path(__file__).resolve().parents[1]
# Another port when another run of this benchmark holds 18080 on the same machine.
PORT = int(os.environ.get("BENCH_FETCH_PORT", "18080"))
# How often a measured run's process tree is looked at (bench.server.run_measured): each
# look is this process's CPU, taken from a pool run that keeps both cores busy (4.3 % of a
# core every 10 ms, 1.2-1.3 % every 50 ms), and not from Scrapy's run on one core.
POLL_S = 0.05
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


# The large set's vocabulary: enough distinct words that the article reads as prose to
# the extractors, not as a repeated template.
PROSE = (
    *VOCABULARY,
    "minister",
    "hospital",
    "workers",
    "contract",
    "regional",
    "spokesperson",
    "funding",
    "proposal",
    "district",
    "families",
    "recovery",
    "industry",
    "committee",
    "warned",
    "estimated",
    "despite",
    "across",
    "between",
    "because",
    "however",
    "several",
    "inspectors",
    "drought",
    "coastline",
    "engineers",
    "railway",
    "investment",
    "tenants",
    "campaign",
    "agreement",
    "schools",
    "teachers",
    "nurses",
    "prices",
    "households",
    "winter",
    "summer",
    "research",
    "university",
    "survey",
    "percent",
    "million",
    "thousand",
    "judge",
    "appeal",
    "ruling",
    "mayor",
    "parliament",
    "vote",
    "opposition",
    "coalition",
    "reform",
    "pension",
    "airport",
    "ferry",
    "bridge",
    "construction",
)
SECTIONS = (
    "news",
    "world",
    "politics",
    "business",
    "science",
    "sport",
    "culture",
    "opinion",
    "travel",
    "food",
    "health",
    "education",
)


def _menu_links(section: str, words: tuple[str, ...]) -> str:
    return "".join(f"<li><a href='/{section}/{w}'>{w.title()} {section}</a></li>" for w in words)


MEGA_MENU = "".join(
    f"<li class='menu-section'><a href='/{section}'>{section.title()}</a><div class='menu-panel'>"
    f"<ul>{_menu_links(section, PROSE[k : k + 16])}</ul>"
    f"<div class='menu-promo'><a href='/{section}/best'><img src='/img/{section}.jpg' "
    f"alt='The best of {section}'><span>The best of {section} this week, chosen by our "
    f"editors</span></a></div></div></li>"
    for k, section in enumerate(SECTIONS)
)
STYLE = "".join(
    f".c{k}{{margin:{k % 7}px {k % 5}px;padding:{k % 3}em;color:#{k * 2654435761 % 16777216:06x};"
    f"font:{12 + k % 6}px/1.{k % 9} 'Gazette Sans',Helvetica,Arial,sans-serif}}"
    f"@media (min-width:{600 + k}px){{.c{k} .card-{k}>a:hover{{text-decoration:underline}}}}"
    for k in range(130)
)
ANALYTICS = (
    "window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}"
    "gtag('js',new Date());gtag('config','G-BENCH0000',{anonymize_ip:true});"
    + "".join(
        f"(function(w,d,s,l,i){{w[l]=w[l]||[];w[l].push({{'event':'tag{k}','ts':new Date()"
        f".getTime()}});var f=d.getElementsByTagName(s)[0],j=d.createElement(s);j.async=true;"
        f"j.src='https://tags.example/{k}.js?id='+i;f.parentNode.insertBefore(j,f)}})"
        f"(window,document,'script','dataLayer','GTM-{k:04d}');"
        for k in range(24)
    )
)


def _prose(seed: bytes, salt: int, words: int) -> str:
    return " ".join(
        PROSE[(seed[(salt * 13 + i) % 32] * (i + 3) + salt * 7 + i) % len(PROSE)]
        for i in range(words)
    )


def large_page_html(host: int, page: int) -> str:
    """A news article as a heavy CMS template renders it: about 100 KB of HTML, of which
    15-20 KB is the article's text; the rest is furniture (inline CSS, analytics and
    application-state scripts, JSON-LD, a mega-menu, related cards, comments)."""
    seed = hashlib.sha256(f"large {host}/{page}".encode()).digest()
    title = f"Region {host} agrees {page} million plan for the coast"
    published = f"2026-04-{1 + page % 28:02d}T09:{page % 60:02d}:00+02:00"
    image = f"https://img.example/{host}/{page}/lead.jpg"
    blocks = []
    for p in range(22):
        if p in (8, 16):
            blocks.append(f"<h2>{_prose(seed, 100 + p, 6).capitalize()}</h2>")
        blocks.append(f"<p>{_prose(seed, p, 105).capitalize()}.</p>")
    related = "".join(
        f"<div class='card'><a href='/news/{page + k}'><img src='/img/{host}/{page + k}.jpg' "
        f"alt=''><h3>{_prose(seed, 200 + k, 8).capitalize()}</h3><p>{_prose(seed, 300 + k, 24)}"
        f"</p></a><span class='time'>{k} hours ago</span></div>"
        for k in range(12)
    )
    comments = "".join(
        f"<li class='comment'><div class='comment-author'>reader{(host * 31 + k) % 997}</div>"
        f"<div class='comment-body'><p>{_prose(seed, 400 + k, 40).capitalize()}.</p></div>"
        f"<a href='#reply-{k}'>Reply</a> <a href='#report-{k}'>Report</a></li>"
        for k in range(14)
    )
    state_items = ",".join(
        f'{{"id":"{host}-{page}-{k}","slug":"/news/{page + k}","headline":"'
        f'{_prose(seed, 500 + k, 9)}","teaser":"{_prose(seed, 600 + k, 28)}","tracking":'
        f'{{"position":{k},"variant":"b{k % 3}","impression":"{seed.hex()[:16]}"}}}}'
        for k in range(60)
    )
    state = (
        f'window.__INITIAL_STATE__={{"page":{{"id":"{host}-{page}","type":"article",'
        f'"section":"news","ads":{{"slots":["top","mpu1","mpu2","bottom"],"targeting":'
        f'{{"kw":["coast","council","budget"]}}}}}},"feeds":[{state_items}]}};'
    )
    jsonld = (
        '{"@context":"https://schema.org","@graph":[{"@type":"NewsArticle",'
        f'"headline":"{title}","datePublished":"{published}","dateModified":"{published}",'
        f'"author":[{{"@type":"Person","name":"Desk {host}"}}],"image":["{image}"],'
        f'"description":"{_prose(seed, 700, 30)}","isAccessibleForFree":true,'
        '"publisher":{"@type":"NewsMediaOrganization","name":"The Bench Gazette",'
        '"logo":{"@type":"ImageObject","url":"https://img.example/logo.png"}}},'
        '{"@type":"BreadcrumbList","itemListElement":[{"@type":"ListItem","position":1,'
        '"name":"News","item":"https://gazette.example/news"}]}]}'
    )
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title} | "
        f"The Bench Gazette</title><meta name='viewport' content='width=device-width'>"
        f"<meta name='description' content='{title}.'>"
        f"<meta property='og:title' content='{title}'><meta property='og:type' "
        f"content='article'><meta property='og:image' content='{image}'>"
        f"<meta property='article:published_time' content='{published}'>"
        f"<meta name='author' content='Desk {host}'>"
        f"<script type='application/ld+json'>{jsonld}</script><style>{STYLE}</style>"
        f"<script>{ANALYTICS}</script></head><body>"
        f"<header><a href='/' class='logo'>The Bench Gazette</a><nav class='mega-menu'><ul>"
        f"{MEGA_MENU}</ul></nav><form action='/search'><input name='q'></form></header>"
        f"<main><article><h1>{title}</h1><p class='byline'>By Desk {host}, "
        f"<time datetime='{published}'>April {1 + page % 28}, 2026</time></p>"
        f"<figure><img src='{image}' alt=''><figcaption>The coast at dawn.</figcaption>"
        f"</figure>{''.join(blocks)}<ul class='tags'><li>coast</li><li>council</li></ul>"
        f"</article><section class='related'><h2>More from the Gazette</h2>{related}"
        f"</section><section id='comments' class='comments'><h2>Comments</h2><ol>"
        f"{comments}</ol></section></main><footer><nav><ul>{NAV}</ul></nav>"
        f"<p>Copyright 2026 The Bench Gazette. All rights reserved.</p></footer>"
        f"<script>{state}</script></body></html>"
    )


# page set -> the prefix of its paths on every host, and its page builder
PAGE_SETS = {
    "standard": ("/a/", page_html),
    "small": ("/s/", news_page_html),
    "large": ("/l/", large_page_html),
}


# The large set's shape, whatever the command line says: the (50 hosts, 64 in flight).
LARGE_HOSTS = 50
LARGE_CONCURRENCY = 64


def shape(
    page_set: str,
    quick: bool,
    concurrency: int | None = None,
    hosts: int | None = None,
    pages: int | None = None,
) -> tuple[int, int, int]:
    """A page set's hosts, pages and pages in flight: its own, or those given."""
    if page_set == "large":
        own = (LARGE_HOSTS, 1_000 if quick else 10_000, LARGE_CONCURRENCY)
    else:
        own = (20, 2_000, 32) if quick else (200, 20_000, 32)
    return hosts or own[0], pages or own[1], concurrency or own[2]


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
def nginx_site(nginx: str, sets: Mapping[str, tuple[int, int]]) -> Iterator[None]:
    """The pages written out as files and served by nginx with one worker, as the issue
    measured them: a static server costs a small share of the cores the fetchers are
    measured on (the aiohttp site spends about as much CPU per page as a fetcher).
    `sets`: each page set's hosts and pages."""
    hosts = max(h for h, _ in sets.values())
    with tempfile.TemporaryDirectory(prefix="bench-site-") as directory:
        root = Path(directory)
        root.chmod(0o755)  # nginx's workers run as another user when started by root
        servers = []
        for index, address in enumerate(addresses(hosts)):
            (root / "hosts" / str(index)).mkdir(parents=True)
            for page_set, (set_hosts, pages) in sets.items():
                if index >= set_hosts:
                    continue
                prefix, build = PAGE_SETS[page_set]
                folder = root / "hosts" / str(index) / prefix.strip("/")
                folder.mkdir(parents=True, exist_ok=True)
                for page in range(pages // set_hosts):
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


def worker_settings(dsn: str, concurrency: int, webhook: str | None, batch: int) -> Any:
    """The bench worker's settings: PostgreSQL, and with `webhook` an optional webhook sink
    to that URL (`batch` documents a POST)."""
    from frontier.settings import Settings

    sinks = None
    if webhook:
        options = {"url": webhook, "secret": {"env": "BENCH_WEBHOOK_SECRET"}, "batch": batch}
        sinks = [
            {"name": "postgres"},
            {"name": "hook", "kind": "webhook", "required": False, "options": options},
        ]
    return Settings.load(
        database_url=dsn,
        allow_private_networks=True,
        fetch_concurrency=concurrency,
        db_pool_size=4,
        sinks=sinks,
        _env_file=None,
    )


def bench_sinks() -> Any:
    """The installed sinks, with the webhook kind given here (a checkout's entry points
    may be newer than the installed metadata)."""
    from fetcher.sink_kinds import WebhookKind
    from frontier.sinks.installed import SinkRegistry, load_sinks

    found = load_sinks()
    return SinkRegistry({**found.sinks, "webhook": WebhookKind()}, found.broken)


def run_worker(
    dsn: str, concurrency: int, extract: bool, webhook: str | None = None, batch: int = 1
) -> None:
    """`webhook`: a receiver's URL, made an optional sink beside PostgreSQL (the outbox's
    cost, `--outbox-compare`), `batch` documents a POST."""
    from fetcher.service import run_fetcher
    from frontier.connect import open_database

    settings = worker_settings(dsn, concurrency, webhook, batch)

    async def main() -> None:
        async with open_database(dsn, settings) as db:
            summary = await run_fetcher(
                settings, db, until_idle=True, extract=extract, installed=bench_sinks()
            )
            print(f"pages {summary.pages}", flush=True)

    asyncio.run(main())


DRAIN_DEADLINE_S = 600.0  # --outage: how long the outbox may take to reach the receiver


def run_delivery(dsn: str, webhook: str, batch: int) -> None:
    """Deliver the outbox to the webhook (as a fetcher's delivery loop does, with nothing
    to fetch) until the outbox is empty, within DRAIN_DEADLINE_S: `--outage`, once the
    receiver is up again."""
    from frontier.connect import open_database
    from frontier.outbox import OutboxDelivery, OutboxPolicy, OutboxRepository
    from frontier.sinks.configured import open_sinks

    settings = worker_settings(dsn, 1, webhook, batch)

    async def main() -> None:
        async with open_database(dsn, settings) as db:
            sinks = await open_sinks(settings, db, bench_sinks())
            policy = OutboxPolicy.from_settings(settings)
            delivery = OutboxDelivery(OutboxRepository(db), sinks.optional, "drain", policy)
            stop = asyncio.Event()
            delivering = asyncio.create_task(delivery.run(stop))
            deadline = time.monotonic() + DRAIN_DEADLINE_S
            try:
                while await db.fetchval("SELECT count(*) FROM sink_outbox WHERE NOT rejected"):
                    if delivering.done() or time.monotonic() > deadline:
                        raise RuntimeError("the outbox was not delivered in time")
                    # polling the outbox's rows, with a deadline
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(delivering), timeout=0.1)
            finally:
                stop.set()
                await delivering
                await delivery.close()
                await sinks.required.close()

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
    worker: bool = False,
    webhook: str | None = None,
    webhook_batch: int = 1,
    prepare: Callable[[str], None] | None = None,
    finish: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """One fetch process over `urls` from a fresh database: `frontier fetch --until-idle`
    (`extract_processes` None: its default pool), or the bench worker (`worker`, or
    extraction off; `webhook`: an optional webhook sink to this URL beside PostgreSQL).
    `archive_dir`: the WARC archive's directory (None: no archive). `prepare`: called
    with the database's DSN once the URLs are in (a source's settings: bench.render);
    `finish`, once the run is measured, before the database is dropped."""
    dsn = server.migrated_database(name)
    submit_urls(dsn, urls)
    if prepare is not None:
        prepare(dsn)
    server.checkpoint()
    if extract and not worker and not webhook:
        command = [sys.executable, "-m", "frontier", "fetch", "--until-idle"]
    else:
        command = [sys.executable, "-m", "bench.fetch", "--worker", dsn]
        command += ["--concurrency", str(concurrency)]
        command += [] if extract else ["--no-extract"]
        command += ["--webhook", webhook, "--webhook-batch", str(webhook_batch)] if webhook else []
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
    run = run_measured(command, env=env, cwd=ROOT, poll_s=POLL_S)
    if run.returncode:
        raise RuntimeError(f"fetch process failed:\n{run.stderr[-3000:]}")
    after = server.cpu_s()
    done = fetched(dsn)
    if finish is not None:
        finish(dsn)
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
    run = run_measured(command, cwd=ROOT, poll_s=POLL_S)
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


def medians(measured: list[dict[str, Any]]) -> dict[str, Any]:
    """Runs of one kind (`ours`'s results): each one's pages/s, CPU per page and stolen
    time, and the medians."""
    return {
        "pages_per_s": [r["pages_per_s"] for r in measured],
        "cpu_ms_per_page": [r["cpu_ms_per_page"] for r in measured],
        "median_pages_per_s": median([r["pages_per_s"] for r in measured]),
        "median_cpu_ms_per_page": median([r["cpu_ms_per_page"] for r in measured]),
        "steal_s": [r["steal_s"] for r in measured],
    }


def compared(this: dict[str, Any], that: dict[str, Any], name: str) -> dict[str, float]:
    """`this` over `that` (both `medians`): `{name}_pages_per_s`, `{name}_cpu_per_page`."""
    return {
        f"{name}_pages_per_s": round(this["median_pages_per_s"] / that["median_pages_per_s"], 3),
        f"{name}_cpu_per_page": round(
            this["median_cpu_ms_per_page"] / that["median_cpu_ms_per_page"], 3
        ),
    }


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
    result: dict[str, Any] = {f"archive_{mode}": medians(runs[mode]) for mode in runs}
    result |= compared(result["archive_on"], result["archive_off"], "on_over_off")
    result["archive_bytes_per_page"] = round(median(disk))
    log(f"archive: {result}")
    return result


class Receiver:
    """A webhook receiver on 127.0.0.1 in a thread of this process (`webhook_receiver`),
    checking each signature as a receiver would. Its socket is bound from the start, so
    its URL is known, but listens only once `up()` is called: until then a connection is
    refused (RST), as a receiver whose service is down refuses it. `keys`: each document's
    idempotency key as it arrived (a batch's documents' own), `times` the monotonic time
    each arrived; `cpu_s()` the CPU time its thread has used so far (it shares
    the machine's cores with the fetch, so `--outbox-compare` reports it beside the
    fetch's and the server's)."""

    def __init__(self, secret: str) -> None:
        import base64
        import socket
        import threading

        self.key = base64.b64decode(secret.removeprefix("whsec_"))
        self.keys: list[str] = []
        self.times: list[float] = []  # each document's arrival, monotonic
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"
        self.loop = asyncio.new_event_loop()
        self.runner: Any = None  # the server, once up
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._started.wait(30)
        self._clock = time.pthread_getcpuclockid(self._thread.ident or 0)

    def cpu_s(self) -> float:
        return time.clock_gettime(self._clock)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._started.set)
        self.loop.run_forever()
        if self.runner is not None:
            self.loop.run_until_complete(self.runner.cleanup())

    async def _take(self, request: Any) -> Any:
        import hmac

        from aiohttp import web

        body = await request.read()
        h = request.headers
        signed = f"{h['webhook-id']}.{h['webhook-timestamp']}.".encode() + body
        digest = hmac.new(self.key, signed, hashlib.sha256).digest()
        if h["webhook-signature"] != "v1," + base64_text(digest):
            return web.Response(status=401)
        data = json.loads(body)["data"]
        keys = [item["id"] for item in data] if isinstance(data, list) else [h["webhook-id"]]
        self.keys += keys
        self.times += [time.monotonic()] * len(keys)
        return web.Response(status=204)

    async def _serve(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/hook", self._take)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        await web.SockSite(self.runner, self.sock, backlog=1024).start()

    def up(self) -> None:
        """Listen: the receiver takes documents from now on."""
        asyncio.run_coroutine_threadsafe(self._serve(), self.loop).result(30)

    def arrived(self, since: int) -> dict[str, int]:
        """The documents arrived after the first `since`: how many, distinct keys, and
        keys that arrived more than once."""
        keys = self.keys[since:]
        return {
            "arrived": len(keys),
            "distinct": len(set(keys)),
            "duplicates": len(keys) - len(set(keys)),
        }

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(30)
        self.sock.close()


def base64_text(digest: bytes) -> str:
    import base64

    return base64.b64encode(digest).decode()


@contextmanager
def webhook_receiver(secret: str, *, listening: bool = True) -> Iterator[Receiver]:
    """A `Receiver`, listening from the start (`listening`) or once its `up()` is called."""
    receiver = Receiver(secret)
    try:
        if listening:
            receiver.up()
        yield receiver
    finally:
        receiver.close()


def outbox_state(dsn: str) -> dict[str, Any]:
    """The outbox after a crawl with the sink down: rows waiting, rows tried (and how many
    tries in all), and the delivery's attempts (the distinct failure times: a claim's rows
    fail together)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE attempts > 0), coalesce(sum(attempts), 0),"
            " count(DISTINCT failed_at), count(*) FILTER (WHERE rejected) FROM sink_outbox"
        ).fetchone()
    assert row is not None
    keys = ("backlog", "rows_tried", "row_tries", "delivery_attempts", "rejected")
    return dict(zip(keys, (int(v) for v in row), strict=True))


def drain_outage(dsn: str, receiver: Receiver, pages: int, batch: int, run: dict[str, Any]) -> None:
    """After a crawl with the sink down: the outbox's state, then the receiver up and a
    delivery process (`--deliver`) until the outbox is empty; every document must arrive,
    once. Adds the figures to `run`."""
    run["outbox_after_crawl"] = state = outbox_state(dsn)
    if state["backlog"] != pages or state["rejected"]:
        raise RuntimeError(f"the outbox after the crawl: {state}, for {pages} pages")
    since = len(receiver.keys)
    receiver.up()
    up_at = time.monotonic()
    command = [sys.executable, "-m", "bench.fetch", "--deliver", dsn]
    command += ["--webhook", receiver.url, "--webhook-batch", str(batch)]
    done = run_measured(command, env=fetch_env(dsn, 1), cwd=ROOT)
    if done.returncode:
        raise RuntimeError(f"the delivery failed:\n{done.stderr[-3000:]}")
    arrived = receiver.arrived(since)
    times = receiver.times[since:]
    run |= arrived
    # from the receiver's start to the last document: the delivery process's start-up
    # and the wait for the rows tried during the outage (their backoff) included
    run["drain_s"] = round(times[-1] - up_at, 2)
    run["drain_docs_per_s"] = round(len(times) / max(times[-1] - up_at, 1e-3), 1)
    # the rows never tried, due at once: how fast the backlog goes
    due = max(pages - state["rows_tried"], 1)
    run["due_docs_per_s"] = round(due / max(times[due - 1] - times[0], 1e-3), 1)
    run["drain_cpu_ms_per_doc"] = round(1000 * done.cpu_s / max(len(times), 1), 3)
    if arrived["distinct"] != pages or arrived["duplicates"]:
        raise RuntimeError(f"after the outage: {arrived}, for {pages} pages")


def outbox_compare(
    server: Any,
    page_set: str,
    hosts: int,
    pages: int,
    c: int,
    rounds: int,
    batch: int = 1,
    extract_processes: int | None = None,
    outage: bool = False,
) -> dict[str, Any]:
    """Ours (the bench worker; `extract_processes` None: the default extraction pool) with
    PostgreSQL alone and with PostgreSQL plus an optional webhook fed by the outbox
    (`batch` documents a POST), in turn, `rounds` times each. The webhook's receiver is up
    during the crawl and must have every document, once, by the end of each run; with
    `outage`, it is down for the whole crawl (it refuses connections) and comes up after
    it, when a delivery process drains the outbox (`drain_outage`). Besides the fetch
    process's CPU a page, each mode's PostgreSQL server's and (on) the receiver's:
    `on_over_off_machine_cpu_per_page` is the three together, on over off (on a machine
    the runs keep busy, the rate follows it), `on_over_off_fetch_and_postgres_cpu_per_page`
    the outbox's own (the bench's receiver left out: it shares the cores, but a real one
    runs elsewhere)."""
    import base64
    import secrets

    urls = url_list(hosts, pages, page_set)
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()
    os.environ["BENCH_WEBHOOK_SECRET"] = secret  # inherited by the worker
    runs: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
    for n in range(rounds):
        runs["off"].append(
            ours(
                server, f"outbox_off_{n}", urls, c, worker=True, extract_processes=extract_processes
            )
        )
        with webhook_receiver(secret, listening=not outage) as receiver:
            cpu_before = receiver.cpu_s()
            drained: dict[str, Any] = {}
            run = ours(
                server,
                f"outbox_on_{n}",
                urls,
                c,
                webhook=receiver.url,
                webhook_batch=batch,
                extract_processes=extract_processes,
                finish=(
                    partial(
                        drain_outage, receiver=receiver, pages=len(urls), batch=batch, run=drained
                    )
                    if outage
                    else None
                ),
            )
            if outage:
                run |= drained
            else:
                run |= receiver.arrived(0)
                run["receiver_cpu_ms_per_page"] = round(
                    1000 * (receiver.cpu_s() - cpu_before) / run["pages"], 3
                )
                if run["distinct"] != run["pages"] or run["duplicates"]:
                    raise RuntimeError(f"the webhook took {receiver.arrived(0)}")
            runs["on"].append(run)
    result: dict[str, Any] = {}
    for mode, measured in runs.items():
        result[f"outbox_{mode}"] = {
            "pages_per_s": [r["pages_per_s"] for r in measured],
            "cpu_ms_per_page": [r["cpu_ms_per_page"] for r in measured],
            "median_pages_per_s": median([r["pages_per_s"] for r in measured]),
            "median_cpu_ms_per_page": median([r["cpu_ms_per_page"] for r in measured]),
            "median_postgres_cpu_ms_per_page": median(
                [r.get("postgres_cpu_ms_per_page", 0.0) for r in measured]
            ),
            "median_machine_cpu_ms_per_page": median([machine_cpu(r) for r in measured]),
            "median_fetch_and_postgres_cpu_ms_per_page": median(
                [machine_cpu(r, receiver=False) for r in measured]
            ),
            "steal_s": [r["steal_s"] for r in measured],
        }
    on = result["outbox_on"]
    if outage:
        for figure in ("drain_s", "drain_docs_per_s", "due_docs_per_s"):
            on[figure] = [r[figure] for r in runs["on"]]
            on[f"median_{figure}"] = median(on[figure])
        on["median_drain_cpu_ms_per_doc"] = median([r["drain_cpu_ms_per_doc"] for r in runs["on"]])
        on["outbox_after_crawl"] = [r["outbox_after_crawl"] for r in runs["on"]]
        on["every_document_once"] = all(
            r["distinct"] == r["pages"] and not r["duplicates"] for r in runs["on"]
        )
    else:
        on["median_receiver_cpu_ms_per_page"] = median(
            [r["receiver_cpu_ms_per_page"] for r in runs["on"]]
        )
    off = result["outbox_off"]
    result["on_over_off_pages_per_s"] = round(
        on["median_pages_per_s"] / off["median_pages_per_s"], 3
    )
    result["on_over_off_cpu_per_page"] = round(
        on["median_cpu_ms_per_page"] / off["median_cpu_ms_per_page"], 3
    )
    result["on_over_off_machine_cpu_per_page"] = round(
        on["median_machine_cpu_ms_per_page"] / off["median_machine_cpu_ms_per_page"], 3
    )
    # The outbox's own cost: the bench's receiver shares the cores, but is not frontier's.
    result["on_over_off_fetch_and_postgres_cpu_per_page"] = round(
        on["median_fetch_and_postgres_cpu_ms_per_page"]
        / off["median_fetch_and_postgres_cpu_ms_per_page"],
        3,
    )
    result["webhook_batch"] = batch
    result["sink_during_crawl"] = "down (connections refused)" if outage else "up"
    result["extract_processes"] = "default" if extract_processes is None else extract_processes
    log(f"outbox: {result}")
    return result


def machine_cpu(run: Mapping[str, Any], *, receiver: bool = True) -> float:
    """The CPU a page of a run on the machine's cores: the fetch process (and its
    workers), the PostgreSQL server and (`receiver`) the webhook's receiver."""
    return round(
        run["cpu_ms_per_page"]
        + run.get("postgres_cpu_ms_per_page", 0.0)
        + (run.get("receiver_cpu_ms_per_page", 0.0) if receiver else 0.0),
        3,
    )


def one_set(
    server: Any, page_set: str, hosts: int, pages: int, c: int, lean: bool = False
) -> dict[str, Any]:
    """Every run on one page set, `pages` over `hosts`, at concurrency `c` (`lean`: ours
    in-process and pooled, and Scrapy + `trafilatura.extract`, only)."""
    urls = url_list(hosts, pages, page_set)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
        handle.write("\n".join(urls))
        url_file = handle.name
    runs: dict[str, Any] = {}
    try:
        if page_set == "standard" and not lean:
            runs["ours_no_extraction"] = ours(server, "fetch_raw", urls, c, extract=False)
            runs["scrapy_no_callback"] = scrapy_run(url_file, len(urls), c, "none")
        runs["ours_in_process"] = ours(server, "fetch_thread", urls, c, extract_processes=0)
        runs["ours_pool"] = ours(server, "fetch_pool", urls, c)
        runs["scrapy_extract"] = scrapy_run(url_file, len(urls), c, "extract")
        if not lean:
            runs["scrapy_bare_extraction"] = scrapy_run(url_file, len(urls), c, "bare")
    finally:
        os.unlink(url_file)
    scrapy = runs["scrapy_extract"]["pages_per_s"]
    runs["ratio_in_process"] = round(runs["ours_in_process"]["pages_per_s"] / scrapy, 2)
    runs["ratio_pool"] = round(runs["ours_pool"]["pages_per_s"] / scrapy, 2)
    if "scrapy_bare_extraction" in runs:
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
    parser.add_argument(
        "--concurrency", type=int, help="pages in flight (default: 32, the large set 64)"
    )
    parser.add_argument("--hosts", type=int, help="every set over this many hosts")
    parser.add_argument("--pages", type=int, help="this many pages in every set")
    parser.add_argument(
        "--lean",
        action="store_true",
        help="only ours (in-process, pool) and Scrapy + trafilatura.extract on each set",
    )
    parser.add_argument("--set", choices=sorted(PAGE_SETS), help="only this page set")
    parser.add_argument(
        "--dsn",
        help="an existing server's superuser DSN (URL form) instead of a throwaway embedded "
        "server; its build and configuration are the operator's",
    )
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
    parser.add_argument(
        "--outbox-compare",
        action="store_true",
        help="only ours, PostgreSQL alone and with an optional webhook fed by the outbox, "
        "in turn (issue 33)",
    )
    parser.add_argument(
        "--outage",
        action="store_true",
        help="--outbox-compare: the webhook's receiver down (refusing connections) for the "
        "whole crawl, then up: every document must arrive once",
    )
    parser.add_argument("--webhook", metavar="URL", help="(the worker's optional webhook)")
    parser.add_argument("--deliver", metavar="DSN", help="(--outage: the outbox's delivery)")
    parser.add_argument(
        "--webhook-batch", type=int, default=1, help="--outbox-compare: documents a POST"
    )
    parser.add_argument(
        "--extract-processes",
        type=int,
        help="--outbox-compare: extraction processes (default: the pool's default; 0: a "
        "thread of the fetch process)",
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="--archive-compare, --outbox-compare: runs each"
    )
    parser.add_argument(
        "--site",
        choices=("auto", "nginx", "aiohttp"),
        default="auto",
        help="what serves the pages: nginx when installed (auto), else an aiohttp process",
    )
    args = parser.parse_args()
    if args.worker:
        extract = not args.no_extract
        c = args.concurrency or 32
        return run_worker(args.worker, c, extract, args.webhook, args.webhook_batch)
    if args.deliver:
        return run_delivery(args.deliver, args.webhook, args.webhook_batch)
    if args.scrapy:
        return run_scrapy(args.scrapy, args.concurrency or 32, args.extraction)
    if args.serve:
        return asyncio.run(serve_site(args.serve))

    sets = [args.set] if args.set else list(PAGE_SETS)
    shapes = {s: shape(s, args.quick, args.concurrency, args.hosts, args.pages) for s in sets}
    hosts = max(h for h, _, _ in shapes.values())
    pages = shapes[sets[0]][1]
    nginx = None if args.site == "aiohttp" else shutil.which("nginx", path=NGINX_PATH)
    if args.site == "nginx" and nginx is None:
        parser.error("--site nginx: no nginx found (Debian: apt-get install nginx)")
    served = {s: (h, p) for s, (h, p, _) in shapes.items()}
    serving = nginx_site(nginx, served) if nginx else aiohttp_site(hosts)
    with serving:
        site = "nginx" if nginx else "aiohttp"
        log(f"site ({site}): sets (hosts, pages, in flight) {shapes}")
        with benchmark_server(args.dsn) as server:
            if args.archive_compare or args.outbox_compare:
                set_hosts, pages, c = shapes[sets[0]]
                if args.archive_compare:
                    compared = archive_compare(server, sets[0], set_hosts, pages, c, args.rounds)
                else:
                    compared = outbox_compare(
                        server,
                        sets[0],
                        set_hosts,
                        pages,
                        c,
                        args.rounds,
                        args.webhook_batch,
                        args.extract_processes,
                        args.outage,
                    )
                emit_result({"pages": pages, "set": sets[0], "site": site, **compared})
                return
            results = {s: one_set(server, s, *shapes[s], lean=args.lean) for s in sets}
    emit_result(
        {
            "pages": pages,
            "hosts": hosts,
            "concurrency": args.concurrency or 32,
            "shapes": shapes,
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
