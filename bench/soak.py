"""Soak benchmark (issue 9): the whole platform running for minutes against local servers,
watched for leaks and bloat. A benchmark, not a CI test.

Run ``python -m bench.soak [--quick] [--minutes N] [--urls N] [--concurrency C]
[--pg-default-autovacuum]``
(default 1,000,000 URLs for 10 minutes; ``--quick``: 50,000 URLs for 90 seconds).

Set-up, on one throwaway embedded server (see `bench.server`) with deploy/README.md's
autovacuum advice (``autovacuum_naptime=10s``, 4 workers, cost limit 2000;
``--pg-default-autovacuum`` keeps PostgreSQL's defaults, a 1-minute naptime):

- The site, a separate process (``--serve``): one aiohttp app listening on 249 loopback
  addresses (127.0.0.2 .. 127.0.0.250) x 4 ports, so 996 hosts as the frontier sees them
  (``host:port``). Any path is a small article page (`bench.fetch.page_html`);
  ``/robots.txt`` is 404; ``/feed/N.xml`` is a 20-item RSS feed whose items move on every
  20 seconds, so every poll finds new URLs.
- The frontier: N pending URLs spread evenly over the 996 hosts, loaded inside PostgreSQL
  (one ``INSERT ... SELECT generate_series``, triggers off, then the host_state summaries
  and the frontier_counts row written as the queue keeps them; VACUUM ANALYZE). 100 feed
  sources (1-minute poll interval) point at the site.
- Real processes, each with its own ``application_name``: ``frontier fetch`` x2 (PostgreSQL
  sink, extraction on), ``frontier poll`` (``FRONTIER_POLL_TICK_S=2``) and ``frontier
  serve`` on a free port with an API token; ``FRONTIER_DEFAULT_DELAY_MS=100``,
  ``FRONTIER_ALLOW_PRIVATE_NETWORKS=true``, default sources not seeded. Their logs go to
  ``bench/out/soak-<timestamp>-<process>.log``.
- The driver (this process) keeps the API lightly busy: ``GET /api/v1/stats`` and the
  dashboard ``GET /`` every 3 s, and a 1,000-URL ``POST /api/v1/import`` every 30 s.

Every 10 s a sample goes to ``bench/out/soak-<timestamp>.csv``: each process's RSS
(VmRSS) and open file descriptors, PostgreSQL client connections by process (and in
total), n_live_tup / n_dead_tup / autovacuum count / total relation size of url_frontier,
host_state, frontier_counts, raw_content and fetch_log, and URLs fetched so far.

Verdicts, decided on the numbers (warm-up is the first quarter of the run, left out):

- flat: for each process, the median of the last quarter's samples against the median of
  the second quarter's. RSS may grow by at most max(10%, 20 MiB) (its least-squares slope
  after warm-up is reported too); open fds other than sockets to the site by at most
  max(10%, 8). Sockets to the site (aiohttp keeps an idle keep-alive connection to every
  host it fetched from in the last `HttpLimits.keepalive_s`, 5 s, which its `limit` does
  not count) must stay under
  hosts + the client's connection limit; PostgreSQL connections never above the pool size
  (FRONTIER_DB_POOL_SIZE) + 1 (an asyncpg pool opens connections on demand up to its size,
  so growth within it is no leak).
- bounded: for url_frontier and host_state, the largest n_dead_tup of the last quarter is
  at most 1.5x that of the second quarter plus the table's autovacuum trigger (no upward
  trend), and the final n_dead_tup is under twice that trigger or the final dead ratio
  (dead / (live + dead)) is at most 0.2.
- clean exit: at the end every process gets SIGTERM and must exit 0 within 60 s, leaving
  no `fetching` row behind.

The last stdout line is one JSON object with the figures and verdicts; the exit status is
1 if a process died, a verdict is false or the shutdown was not clean.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench.api_import import free_port, wait_ready
from bench.claim_scaling import vacuum
from bench.fetch import page_html
from bench.server import SERVER_SETTINGS, emit_result, log, median, running_server

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
ADDRESSES = tuple(f"127.0.0.{i}" for i in range(2, 251))
PAGE_PORTS = (18_301, 18_302, 18_303, 18_304)
FEED_PORT = 18_300
FEEDS = 100
FEED_HOSTS = 25  # feeds are on the first 25 addresses, 4 per host
FEED_ITEMS = 20
FEED_SLOT_S = 20  # a feed gets a new item every FEED_SLOT_S seconds
TOKEN = "soak-token-0123456789abcdef0123456789"
DATABASE = "soak"
POOL_SIZE = 10
DELAY_MS = 100
SAMPLE_S = 10.0
API_EVERY_S = 3.0
IMPORT_EVERY_S = 30.0
IMPORT_URLS = 1_000
STOP_GRACE_S = 60.0
# deploy/README.md's autovacuum advice for the update-heavy url_frontier and host_state.
AUTOVACUUM = {
    "autovacuum_naptime": "10s",
    "autovacuum_max_workers": "4",
    "autovacuum_vacuum_cost_limit": "2000",
}
TABLES = ("url_frontier", "host_state", "frontier_counts", "raw_content", "fetch_log")
WATCHED = ("url_frontier", "host_state")  # the tables whose bloat must stay bounded
PROCESSES = ("fetch1", "fetch2", "poll", "api")

# Tolerances of the verdicts (see the module docstring).
RSS_GROWTH_FRACTION, RSS_GROWTH_MIB = 0.10, 20.0
FD_GROWTH_FRACTION, FD_GROWTH_ABS = 0.10, 8
DEAD_TREND_FACTOR = 1.5
DEAD_RATIO_MAX = 0.2


HOSTS = tuple(f"{address}:{port}" for address in ADDRESSES for port in PAGE_PORTS)


def feed_url(n: int) -> str:
    return f"http://{ADDRESSES[n % FEED_HOSTS]}:{FEED_PORT}/feed/{n}.xml"


# -- the site (a separate process) ---------------------------------------------------------


def feed_body(n: int, now: float) -> bytes:
    """Feed n's newest FEED_ITEMS items: one per FEED_SLOT_S slot, linking pages of the
    site, so each poll brings the items of the slots since the last one."""
    slot = int(now // FEED_SLOT_S)
    items = []
    for k in range(FEED_ITEMS):
        s = slot - k
        host = HOSTS[(n * 31 + s) % len(HOSTS)]
        link = f"http://{host}/f/{n}/{s}"
        items.append(
            f"<item><title>Feed {n} story {s}</title><link>{link}</link>"
            f"<guid>{link}</guid><pubDate>{formatdate(s * FEED_SLOT_S, usegmt=True)}"
            "</pubDate><description>A short summary.</description></item>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
        f"<title>Soak feed {n}</title><link>http://{ADDRESSES[n % FEED_HOSTS]}/</link>"
        f"{''.join(items)}</channel></rss>"
    ).encode()


async def serve_site() -> None:
    from aiohttp import web

    async def page(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        digest = hashlib.blake2b(f"{request.host}{request.path}".encode(), digest_size=8)
        key = int.from_bytes(digest.digest(), "big")  # a page of its own for every URL
        return web.Response(text=page_html(key % 1000, key // 1000), content_type="text/html")

    async def feed(request: web.Request) -> web.Response:
        body = feed_body(int(request.match_info["n"]), time.time())
        return web.Response(body=body, content_type="application/rss+xml")

    app = web.Application()
    app.router.add_get("/feed/{n:[0-9]+}.xml", feed)
    app.router.add_get("/{tail:.*}", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    for address in ADDRESSES:
        for port in PAGE_PORTS:
            await web.TCPSite(runner, address, port, backlog=1024).start()
    for address in ADDRESSES[:FEED_HOSTS]:
        await web.TCPSite(runner, address, FEED_PORT, backlog=1024).start()
    print("ready", flush=True)
    await asyncio.Event().wait()


# -- loading the frontier ------------------------------------------------------------------

_INSERT_URLS = """
INSERT INTO url_frontier (url_hash, url, host, source_id, origin, depth, priority, status,
                          next_fetch_at)
SELECT encode(sha256(convert_to(g.url, 'UTF8')), 'hex'), g.url, h.host, %(source)s,
       'manual', 0, 1 + (h.host_no * 7 + i) %% 10, 'pending', now() - interval '1 minute'
FROM soak_hosts h
CROSS JOIN LATERAL generate_series(1, h.n) AS i
CROSS JOIN LATERAL (SELECT 'http://' || h.host || '/a/' || i AS url) g
ORDER BY 1
"""

_FILL_HOST_STATE = """
INSERT INTO host_state (host, min_delay_ms, pending_count, pending_priority, pending_due_at)
SELECT host, %(delay)s, count(*), max(priority), min(next_fetch_at)
FROM url_frontier WHERE status = 'pending' GROUP BY host
"""


def load_frontier(dsn: str, count: int) -> None:
    """`count` pending URLs over the site's hosts, with the summaries the queue keeps."""
    names = HOSTS
    start = time.perf_counter()
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT id FROM sources WHERE name = 'manual'").fetchone()
        assert row is not None
        source = row[0]
        conn.execute("SET LOCAL session_replication_role = replica")  # no triggers, no FK check
        conn.execute("SET LOCAL work_mem = '1GB'")
        conn.execute("CREATE TEMP TABLE soak_hosts (host_no int, host text, n int)")
        with conn.cursor() as cursor, cursor.copy("COPY soak_hosts FROM STDIN") as copy:
            for k, host in enumerate(names):
                copy.write_row((k, host, count // len(names) + (k < count % len(names))))
        conn.execute(_INSERT_URLS, {"source": source})
        conn.execute(
            "INSERT INTO frontier_counts (source_id, origin, status, n) "
            "VALUES (%s, 'manual', 'pending', %s)",
            (source, count),
        )
        conn.execute(_FILL_HOST_STATE, {"delay": DELAY_MS})
        urls = [feed_url(n) for n in range(FEEDS)]
        conn.execute(
            "INSERT INTO sources (name, feed_url, feed_poll_interval_minutes) "
            "SELECT 'soak-feed-' || n, u, 1 FROM unnest(%s::text[]) WITH ORDINALITY AS t(u, n)",
            (urls,),
        )
        conn.execute(
            "INSERT INTO feed_state (source_id, feed_url) "
            "SELECT id, feed_url FROM sources WHERE name LIKE 'soak-feed-%'"
        )
    vacuum(dsn, analyze=True)
    log(
        f"loaded {count:,} URLs over {len(names)} hosts and {FEEDS} feeds "
        f"in {time.perf_counter() - start:.1f}s"
    )


# -- the processes -------------------------------------------------------------------------


def with_application_name(dsn: str, name: str) -> str:
    return f"{dsn}{'&' if '?' in dsn else '?'}application_name={name}"


@dataclass(slots=True)
class Child:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def error_lines(self) -> int:
        text = self.log_path.read_text(errors="replace")
        return text.count("Traceback") + text.count(" ERROR ")


def start_children(dsn: str, port: int, concurrency: int, stamp: str, workdir: Path) -> list[Child]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    base.update(
        FRONTIER_ALLOW_PRIVATE_NETWORKS="true",
        FRONTIER_DEFAULT_DELAY_MS=str(DELAY_MS),
        FRONTIER_POLL_TICK_S="2",
        FRONTIER_SEED_DEFAULT_SOURCES="false",
        FRONTIER_API_TOKEN=TOKEN,
        FRONTIER_FETCH_CONCURRENCY=str(concurrency),
        FRONTIER_FETCH_SHUTDOWN_S="10",
        FRONTIER_DB_POOL_SIZE=str(POOL_SIZE),
    )
    commands = {
        "fetch1": ["fetch"],
        "fetch2": ["fetch"],
        "poll": ["poll"],
        "api": ["serve", "--port", str(port)],
    }
    children = []
    for name in PROCESSES:
        env = dict(base, FRONTIER_DATABASE_URL=with_application_name(dsn, f"soak-{name}"))
        log_path = OUT / f"soak-{stamp}-{name}.log"
        with log_path.open("wb") as handle:
            process = subprocess.Popen(
                [sys.executable, "-m", "frontier", *commands[name]],
                env=env,
                cwd=workdir,
                stdout=handle,
                stderr=subprocess.STDOUT,
            )
        children.append(Child(name, process, log_path))
    return children


def check_alive(children: Sequence[Child]) -> None:
    for child in children:
        if child.process.poll() is not None:
            raise RuntimeError(
                f"{child.name} died (exit {child.process.returncode}); its log "
                f"{child.log_path} ends:\n{child.tail()}"
            )


def stop_children(children: Sequence[Child]) -> dict[str, Any]:
    """SIGTERM all at once; each must exit 0 within STOP_GRACE_S (else it is killed)."""
    start = time.monotonic()
    for child in children:
        if child.process.poll() is None:
            child.process.send_signal(signal.SIGTERM)
    codes: dict[str, int | None] = {}
    took: dict[str, float] = {}
    for child in children:
        try:
            codes[child.name] = child.process.wait(
                max(0.1, start + STOP_GRACE_S - time.monotonic())
            )
        except subprocess.TimeoutExpired:
            child.process.kill()
            child.process.wait()
            codes[child.name] = None  # did not stop in time
        took[child.name] = round(time.monotonic() - start, 1)
    return {"exit_codes": codes, "stopped_within_s": took}


# -- sampling ------------------------------------------------------------------------------

_TABLE_STATS = """
SELECT relname, n_live_tup, n_dead_tup, autovacuum_count, vacuum_count,
       pg_total_relation_size(relid)
FROM pg_stat_user_tables WHERE relname = ANY(%s)
"""
_CONNECTIONS = """
SELECT application_name, count(*) FROM pg_stat_activity
WHERE datname = %s AND backend_type = 'client backend' GROUP BY 1
"""
_FETCHED = """
SELECT (SELECT coalesce(sum(n), 0) FROM frontier_counts WHERE status = 'fetched'),
       (SELECT count(*) FROM fetch_log WHERE kind = 'page')
"""


def site_socket_inodes() -> set[str]:
    """Inodes of the TCP sockets connected to the site's ports (from /proc/net/tcp)."""
    ports = {f"{port:04X}" for port in (*PAGE_PORTS, FEED_PORT)}
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[2].rsplit(":", 1)[1] in ports:
            inodes.add(fields[9])
    return inodes


def proc_status(pid: int, site: set[str]) -> tuple[float, int, int]:
    """(VmRSS in MiB, open file descriptors, of which sockets to the site) of a process."""
    rss = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
    fds = sockets = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        fds += 1
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:[") and target[8:-1] in site:
            sockets += 1
    return rss, fds, sockets


def sample(
    conn: psycopg.Connection[Any], children: Sequence[Child], elapsed: float, api_ms: float
) -> dict[str, Any]:
    row: dict[str, Any] = {"t_s": round(elapsed, 1)}
    fetched = conn.execute(_FETCHED).fetchone()
    assert fetched is not None
    row["fetched"], row["page_attempts"] = int(fetched[0]), int(fetched[1])
    site = site_socket_inodes()
    for child in children:
        rss, fds, sockets = proc_status(child.process.pid, site)
        row[f"{child.name}_rss_mib"] = round(rss, 1)
        row[f"{child.name}_fds"] = fds
        row[f"{child.name}_site_sockets"] = sockets
        row[f"{child.name}_other_fds"] = fds - sockets
    connections = dict(conn.execute(_CONNECTIONS, (DATABASE,)).fetchall())
    for child in children:
        row[f"{child.name}_conns"] = connections.get(f"soak-{child.name}", 0)
    row["conns_total"] = sum(n for name, n in connections.items() if name != "soak-sampler")
    stats = {r[0]: r[1:] for r in conn.execute(_TABLE_STATS, (list(TABLES),)).fetchall()}
    for table in TABLES:
        live, dead, autovacuums, vacuums, size = stats.get(table, (0, 0, 0, 0, 0))
        row[f"{table}_live"] = live
        row[f"{table}_dead"] = dead
        row[f"{table}_autovacuums"] = autovacuums + vacuums
        row[f"{table}_mib"] = round(size / 2**20, 2)
    row["api_stats_ms"] = round(api_ms, 1)
    return row


def autovacuum_triggers(conn: psycopg.Connection[Any]) -> dict[str, float]:
    """Dead tuples at which autovacuum picks each watched table up: threshold + scale x
    reltuples, from the table's own reloptions or else the server's settings."""
    out = {}
    for table in WATCHED:
        row = conn.execute(
            "SELECT c.reltuples, coalesce((SELECT split_part(o, '=', 2) FROM unnest(c.reloptions)"
            " o WHERE o LIKE 'autovacuum_vacuum_threshold=%%'), current_setting("
            "'autovacuum_vacuum_threshold'))::float8, coalesce((SELECT split_part(o, '=', 2) "
            "FROM unnest(c.reloptions) o WHERE o LIKE 'autovacuum_vacuum_scale_factor=%%'), "
            "current_setting('autovacuum_vacuum_scale_factor'))::float8 "
            "FROM pg_class c WHERE c.relname = %s",
            (table,),
        ).fetchone()
        assert row is not None
        reltuples, threshold, scale = row
        out[table] = threshold + scale * max(reltuples, 0)
    return out


# -- the driver ------------------------------------------------------------------------------


@dataclass(slots=True)
class Driver:
    """Keeps the API lightly busy; counts what it got."""

    base: str
    client: httpx.Client = field(init=False)
    stats_ms: list[float] = field(default_factory=list)
    dashboard_ms: list[float] = field(default_factory=list)
    imports: int = 0
    imported: int = 0
    failures: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.client = httpx.Client(base_url=self.base, timeout=30)

    def _get(self, path: str, into: list[float]) -> float:
        start = time.perf_counter()
        try:
            response = self.client.get(path)
        except httpx.HTTPError as exc:
            self.failures.append(f"GET {path}: {exc!r}")
            return float("nan")
        ms = (time.perf_counter() - start) * 1000
        if response.status_code != 200:
            self.failures.append(f"GET {path}: {response.status_code} {response.text[:200]}")
        into.append(ms)
        return ms

    def read(self) -> float:
        self._get("/", self.dashboard_ms)
        return self._get("/api/v1/stats", self.stats_ms)

    def bulk_import(self, round_no: int) -> None:
        names = HOSTS
        body = "\n".join(
            f"http://{names[(round_no * 131 + k) % len(names)]}/i/{round_no}/{k}"
            for k in range(IMPORT_URLS)
        )
        try:
            response = self.client.post(
                "/api/v1/import",
                content=body.encode(),
                headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "text/plain"},
            )
        except httpx.HTTPError as exc:
            self.failures.append(f"POST /api/v1/import: {exc!r}")
            return
        if response.status_code != 200:
            self.failures.append(
                f"POST /api/v1/import: {response.status_code} {response.text[:200]}"
            )
            return
        self.imports += 1
        self.imported += int(response.json()["accepted"])


def soak(
    dsn: str, children: Sequence[Child], driver: Driver, seconds: float, csv_path: Path
) -> list[dict[str, Any]]:
    """Run the driver and the sampler for `seconds`; every sample is written as it comes."""
    samples: list[dict[str, Any]] = []
    start = time.monotonic()
    next_api = next_import = next_sample = start
    api_ms = float("nan")
    import_round = 0
    with (
        psycopg.connect(with_application_name(dsn, "soak-sampler"), autocommit=True) as conn,
        csv_path.open("w", newline="") as handle,
    ):
        writer: csv.DictWriter[str] | None = None
        while True:
            now = time.monotonic()
            check_alive(children)
            if now >= next_sample:
                row = sample(conn, children, now - start, api_ms)
                samples.append(row)
                if writer is None:
                    writer = csv.DictWriter(handle, fieldnames=list(row))
                    writer.writeheader()
                writer.writerow(row)
                handle.flush()
                log(
                    f"t={row['t_s']:>5.0f}s fetched {row['fetched']:>7,} "
                    f"(attempts {row['page_attempts']:,}) | RSS "
                    + " ".join(f"{c.name} {row[f'{c.name}_rss_mib']:.0f}" for c in children)
                    + f" MiB | conns {row['conns_total']} | dead url_frontier "
                    f"{row['url_frontier_dead']:,} host_state {row['host_state_dead']:,}"
                )
                next_sample += SAMPLE_S
                if now - start >= seconds:
                    return samples
            if now >= next_api:
                api_ms = driver.read()
                next_api += API_EVERY_S
            if now >= next_import:
                driver.bulk_import(import_round)
                import_round += 1
                next_import += IMPORT_EVERY_S
            time.sleep(max(0.0, min(next_api, next_import, next_sample) - time.monotonic()))


# -- verdicts --------------------------------------------------------------------------------


def quarter(
    samples: Sequence[Mapping[str, Any]], seconds: float, q: int
) -> list[Mapping[str, Any]]:
    """The samples of quarter q (1..4) of the run; the last one includes the final sample."""
    low, high = seconds * (q - 1) / 4, seconds * q / 4
    return [s for s in samples if low <= s["t_s"] < high or (q == 4 and s["t_s"] >= high)]


def growth(early: float, late: float) -> dict[str, Any]:
    return {
        "q2_median": round(early, 1),
        "q4_median": round(late, 1),
        "growth": round(late - early, 1),
        "growth_pct": round(100 * (late - early) / early, 1) if early else 0.0,
    }


def slope_per_min(samples: Sequence[Mapping[str, Any]], key: str) -> float:
    """Least-squares slope of `key` against time, per minute."""
    xs, ys = [s["t_s"] / 60 for s in samples], [float(s[key]) for s in samples]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / spread if spread else 0.0


def flatness(
    samples: Sequence[Mapping[str, Any]], seconds: float, socket_cap: int
) -> dict[str, Any]:
    q2, q4 = quarter(samples, seconds, 2), quarter(samples, seconds, 4)
    if not q2 or not q4:
        raise RuntimeError("too few samples for a verdict: run longer")
    settled = [s for s in samples if s["t_s"] >= seconds / 4]
    out: dict[str, Any] = {}
    flat = True
    for name in PROCESSES:
        figures: dict[str, Any] = {}
        for metric in ("rss_mib", "other_fds", "site_sockets", "conns"):
            key = f"{name}_{metric}"
            g = growth(median([s[key] for s in q2]), median([s[key] for s in q4]))
            g["max"] = max(s[key] for s in samples)
            if metric == "rss_mib":
                g["ok"] = g["growth"] <= max(RSS_GROWTH_FRACTION * g["q2_median"], RSS_GROWTH_MIB)
                g["slope_mib_per_min"] = round(slope_per_min(settled, key), 2)
            elif metric == "other_fds":
                g["ok"] = g["growth"] <= max(FD_GROWTH_FRACTION * g["q2_median"], FD_GROWTH_ABS)
            elif metric == "site_sockets":
                g["ok"] = g["max"] <= socket_cap
            else:
                g["ok"] = g["max"] <= POOL_SIZE + 1
            figures[metric] = g
            flat = flat and g["ok"]
        out[name] = figures
    total = growth(median([s["conns_total"] for s in q2]), median([s["conns_total"] for s in q4]))
    out["conns_total"] = total
    out["flat"] = flat
    return out


def boundedness(
    samples: Sequence[Mapping[str, Any]], seconds: float, triggers: Mapping[str, float]
) -> dict[str, Any]:
    q2, q4 = quarter(samples, seconds, 2), quarter(samples, seconds, 4)
    out: dict[str, Any] = {}
    bounded = True
    for table in (*WATCHED, "frontier_counts", "raw_content", "fetch_log"):
        dead = [s[f"{table}_dead"] for s in samples]
        final = samples[-1]
        ratio = final[f"{table}_dead"] / max(1, final[f"{table}_dead"] + final[f"{table}_live"])
        figures: dict[str, Any] = {
            "max_dead": max(dead),
            "final_dead": final[f"{table}_dead"],
            "final_live": final[f"{table}_live"],
            "final_dead_ratio": round(ratio, 3),
            "autovacuums": final[f"{table}_autovacuums"] - samples[0][f"{table}_autovacuums"],
            "mib_start": samples[0][f"{table}_mib"],
            "mib_final": final[f"{table}_mib"],
        }
        if table in triggers:
            trigger = triggers[table]
            q2_max = max(s[f"{table}_dead"] for s in q2)
            q4_max = max(s[f"{table}_dead"] for s in q4)
            no_trend = q4_max <= DEAD_TREND_FACTOR * q2_max + trigger
            low_final = figures["final_dead"] <= 2 * trigger or ratio <= DEAD_RATIO_MAX
            figures.update(
                autovacuum_trigger=round(trigger),
                q2_max_dead=q2_max,
                q4_max_dead=q4_max,
                bounded=no_trend and low_final,
            )
            bounded = bounded and figures["bounded"]
        out[table] = figures
    out["bounded"] = bounded
    return out


def fetch_outcomes(dsn: str) -> dict[str, int]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT kind || ':' || outcome, count(*) FROM fetch_log GROUP BY 1 ORDER BY 1"
        ).fetchall()
    return {name: int(n) for name, n in rows}


def leftover_fetching(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT count(*) FROM url_frontier WHERE status = 'fetching'").fetchone()
    return int(row[0]) if row else -1


# -- main ------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50,000 URLs for 90 seconds")
    parser.add_argument("--minutes", type=float, help="how long to soak (default 10; quick 1.5)")
    parser.add_argument("--urls", type=int, help="frontier size (default 1M; quick 50k)")
    parser.add_argument("--concurrency", type=int, default=32, help="fetches per fetcher")
    parser.add_argument(
        "--pg-default-autovacuum",
        action="store_true",
        help="PostgreSQL's own autovacuum settings, not deploy/README.md's",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        asyncio.run(serve_site())
        return 0
    seconds = 60 * (args.minutes or (1.5 if args.quick else 10.0))
    count = args.urls or (50_000 if args.quick else 1_000_000)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    OUT.mkdir(parents=True, exist_ok=True)
    csv_path = OUT / f"soak-{stamp}.csv"
    site = subprocess.Popen(
        [sys.executable, "-m", "bench.soak", "--serve"], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    children: list[Child] = []
    try:
        assert site.stdout is not None
        if site.stdout.readline().strip() != "ready":
            raise RuntimeError("the site did not start (do 127.0.0.x addresses bind here?)")
        log(f"site: {len(HOSTS)} page hosts, {FEEDS} feeds")
        settings = dict(SERVER_SETTINGS, **({} if args.pg_default_autovacuum else AUTOVACUUM))
        with running_server(settings) as server, tempfile.TemporaryDirectory() as workdir:
            dsn = server.migrated_database(DATABASE)
            load_frontier(dsn, count)
            server.checkpoint()
            port = free_port()
            children = start_children(dsn, port, args.concurrency, stamp, Path(workdir))
            base = f"http://127.0.0.1:{port}"
            wait_ready(base, children[-1].process)
            with psycopg.connect(dsn) as conn:
                triggers = autovacuum_triggers(conn)
            driver = Driver(base)
            log(f"soaking for {seconds:.0f}s; samples in {csv_path}")
            samples = soak(dsn, children, driver, seconds, csv_path)
            stopped = stop_children(children)
            leftover = leftover_fetching(dsn)
            outcomes = fetch_outcomes(dsn)
    finally:
        for child in children:
            if child.process.poll() is None:
                child.process.kill()
                child.process.wait()
        site.terminate()
        site.wait()
    flat = flatness(samples, seconds, len(HOSTS) + FEED_HOSTS + max(100, 2 * args.concurrency))
    bounded = boundedness(samples, seconds, triggers)
    clean = all(code == 0 for code in stopped["exit_codes"].values()) and leftover == 0
    elapsed = samples[-1]["t_s"] - samples[0]["t_s"]
    fetched = samples[-1]["fetched"] - samples[0]["fetched"]
    attempts = samples[-1]["page_attempts"] - samples[0]["page_attempts"]
    log_errors = {child.name: child.error_lines() for child in children}
    ok = flat["flat"] and bounded["bounded"] and clean and not driver.failures
    if not clean:
        for child in children:
            log(f"{child.name} log ends:\n{child.tail(20)}")
    emit_result(
        {
            "urls": count,
            "hosts": len(HOSTS),
            "feeds": FEEDS,
            "seconds": round(elapsed),
            "quick": args.quick,
            "fetchers": 2,
            "concurrency": args.concurrency,
            "fetched": fetched,
            "pages_per_s": round(fetched / elapsed, 1),
            "page_attempts_per_s": round(attempts / elapsed, 1),
            "autovacuum": {} if args.pg_default_autovacuum else AUTOVACUUM,
            "api": {
                "stats_ms_median": round(median(driver.stats_ms), 1),
                "dashboard_ms_median": round(median(driver.dashboard_ms), 1),
                "imports": driver.imports,
                "imported": driver.imported,
                "failures": driver.failures[:5],
            },
            "flat": flat["flat"],
            "bounded": bounded["bounded"],
            "clean_exit": clean,
            "processes": {k: v for k, v in flat.items() if k != "flat"},
            "tables": {k: v for k, v in bounded.items() if k != "bounded"},
            "shutdown": {**stopped, "leftover_fetching": leftover},
            "fetch_log": outcomes,
            "log_errors": log_errors,
            "csv": str(csv_path),
            "ok": ok,
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
