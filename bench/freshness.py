"""Benchmark freshness: the time from an entry appearing in a feed to its document being
stored (`raw_content.fetched_at`), polled and pushed through WebSub (issue 32).

Run ``python -m bench.freshness [--quick] [--mode poll|push|both]``. 1,000 feeds (300 with
``--quick``) over 50 loopback hosts (15), 20 feeds a host, each polled every minute (the
shortest interval a source takes), on an aiohttp server in a thread. Each feed starts with
one old entry, whose fetch warms its host (robots.txt, the host's state) as a crawler in
service has; once every old entry is stored (and, pushed, every subscription verified),
one new entry appears in each feed at a random time within a window of 120 s (60 s with
``--quick``), and its article page is served from then on. ``--feeds``, ``--hosts`` and
``--window`` set another size; a FRONTIER_ setting in the environment goes to the
children (a comparison of a setting's values).

- ``poll``: ``frontier poll`` and ``frontier fetch`` run as child processes with the
  production settings (FRONTIER_POLL_TICK_S 30 unless ``--tick``; FRONTIER_DEFAULT_DELAY_MS
  1000), on a fresh database. Target: the poll interval + 5 s at the 99th percentile.
- ``push``: the same, with ``frontier serve`` (the WebSub callback, FRONTIER_PUBLIC_URL set
  for the API and the poller) and a WebSub hub in this process (tests/websub_hub.py, the
  W3C Recommendation's): every feed declares the hub; once every subscription is active,
  each new entry is published to the hub when it appears, which POSTs the feed to the
  callback at once. Target: 5 s at the 99th percentile.

The entry's appearance time is this process's clock, the document's storing time the
database's (one machine). The last line is one JSON object: per mode the entries,
stored, p50/p99/max seconds, whether the target was met, and the `breakdown` of the
entries' times into their parts (p50/p99/max of each, and each part's mean over the
slowest 1 %): appeared -> polled (the first answer of the feed that shows the entry) ->
submitted (its URL inserted into the frontier, recorded by a trigger of the benchmark's)
-> requested (the first answer of its page: claimed, its host's turn come) -> stored;
and `poll_gap`, the time between that poll and the feed's poll before it (60 s kept, or
how late). A pushed entry has no `polled`: its first part is appeared -> submitted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from aiohttp import web

from bench.poll import FeedServer
from bench.server import emit_result, log, percentile, running_server
from tests.websub_hub import LocalHub

ROOT = Path(__file__).resolve().parents[1]
INTERVAL_S = 60.0  # each source's feed_poll_interval_minutes = 1
PUSH_TARGET_S = 5.0
POLL_SLACK_S = 5.0


class FeedSite(FeedServer):
    """Feeds and their articles on several loopback addresses (bench.poll's server), and
    (push) a hub, in a thread with an event loop of its own."""

    def __init__(self, feeds: int, hosts: int, *, push: bool) -> None:
        super().__init__(hosts)
        self.feeds = feeds
        self.push = push
        self.hub: LocalHub | None = None
        self.appeared: dict[str, float] = {}  # article URL -> time.time() it appeared
        self._visible: set[int] = set()  # feeds whose new entry is out
        # The answers, by this process's clock: each feed's, the first with its new entry
        # (polled), and each new article's first (requested: claimed, its host's turn come).
        self.served: dict[int, list[float]] = {}
        self.polled: dict[str, float] = {}  # article URL -> first feed answer showing it
        self.requested: dict[str, float] = {}  # article URL -> first answer of its page

    def article_url(self, n: int) -> str:
        return f"http://{self.addresses[n % len(self.addresses)]}:{self.port}/a/{n}/1.html"

    def old_url(self, n: int) -> str:
        return f"http://{self.addresses[n % len(self.addresses)]}:{self.port}/a/{n}/0.html"

    def feed_body(self, n: int) -> bytes:
        links = ""
        if self.hub is not None:
            links = (
                f'<link rel="hub" href="{self.hub.url}"/><link rel="self" href="{self.url(n)}"/>'
            )
        old = self.old_url(n)  # there from the start: its fetch warms the host's robots.txt
        entry = (
            f"<entry><title>Old story of feed {n}</title><id>{old}</id>"
            f'<link href="{old}"/><updated>2026-03-01T00:00:00Z</updated></entry>'
        )
        if n in self._visible:
            url = self.article_url(n)
            stamp = datetime.fromtimestamp(self.appeared[url], UTC).isoformat()
            entry += (
                f"<entry><title>Story of feed {n}</title><id>{url}</id>"
                f'<link href="{url}"/><updated>{stamp}</updated></entry>'
            )
        return (
            '<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
            f"<title>Feed {n}</title><id>urn:feed:{n}</id>"
            f"<updated>2026-03-01T00:00:00Z</updated>{links}{entry}</feed>"
        ).encode()

    async def _feed(self, request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        body = self.feed_body(n)
        now = time.time()
        self.served.setdefault(n, []).append(now)
        if n in self._visible:
            self.polled.setdefault(self.article_url(n), now)
        return web.Response(body=body, content_type="application/atom+xml")

    async def _article(self, request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        k = int(request.match_info["k"])
        if k == 1 and n not in self._visible:
            return web.Response(status=404)
        if k == 1:
            self.requested.setdefault(self.article_url(n), time.time())
        page = article_page(f"Story {request.match_info['k']} of feed {n}", n * 2 + k)
        return web.Response(text=page, content_type="text/html")

    async def _robots(self, _request: web.Request) -> web.Response:
        return web.Response(status=404)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/feed/{n}.xml", self._feed)
        app.router.add_get("/a/{n}/{k}.html", self._article)
        app.router.add_get("/robots.txt", self._robots)

    def start(self) -> FeedSite:
        super().start()
        if self.push:  # the hub on an address of its own, beside the feeds
            hub = LocalHub("127.0.0.254").start()
            self.hub = asyncio.run_coroutine_threadsafe(hub, self._loop).result(30)
        return self

    def stop(self) -> None:
        if self.hub is not None:
            asyncio.run_coroutine_threadsafe(self.hub.stop(), self._loop).result(30)
        super().stop()

    def subscribed(self) -> int:
        return len(self.hub.subscriptions) if self.hub is not None else 0

    def schedule(self, window_s: float, rng: random.Random) -> None:
        """Each feed's new entry appears at a random time within the next `window_s`."""
        for n in range(self.feeds):
            self._loop.call_soon_threadsafe(
                self._loop.call_later, rng.uniform(0, window_s), self._appear, n
            )

    def _appear(self, n: int) -> None:
        self.appeared[self.article_url(n)] = time.time()
        self._visible.add(n)
        if self.hub is not None:  # the publisher pings its hub, which distributes at once
            self._loop.create_task(self.hub.publish(self.url(n), self.feed_body(n)))


WORDS = [
    "council",
    "budget",
    "river",
    "bridge",
    "school",
    "library",
    "mayor",
    "vote",
    "harbour",
    "festival",
    "museum",
    "train",
    "station",
    "market",
    "weather",
    "storm",
    "farmers",
    "election",
    "court",
    "judge",
    "hospital",
    "nurses",
    "teachers",
    "stadium",
    "league",
    "season",
    "concert",
    "theatre",
    "novel",
    "author",
    "science",
    "rocket",
    "museum",
    "garden",
    "park",
    "police",
    "fire",
    "rescue",
    "mountain",
    "valley",
    "village",
    "city",
    "region",
    "minister",
    "parliament",
    "treaty",
]


def article_page(title: str, seed: int) -> str:
    """An article of its own words (no two are duplicates or near-duplicates)."""
    rng = random.Random(seed)
    paragraphs = "".join(
        "<p>" + " ".join(rng.choice(WORDS) for _ in range(40)) + ".</p>" for _ in range(6)
    )
    return (
        f"<!doctype html><html lang='en'><head><title>{title}</title></head><body>"
        f"<nav>menu home about</nav><article><h1>{title}</h1>{paragraphs}</article>"
        "<footer>copyright</footer></body></html>"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Children:
    """The frontier's processes of one run, each logging to a file; SIGTERM at the end."""

    def __init__(self, env: Mapping[str, str], workdir: Path) -> None:
        self.env = dict(env)
        self.workdir = workdir
        self.processes: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, *args: str) -> None:
        out = (self.workdir / f"{name}.log").open("wb")
        command = [sys.executable, "-m", "frontier", *args]
        process = subprocess.Popen(command, stdout=out, stderr=out, env=self.env, cwd=self.workdir)
        self.processes.append((name, process))

    def check(self) -> None:
        for name, process in self.processes:
            if process.poll() is not None:
                tail = (self.workdir / f"{name}.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"frontier {name} exited {process.returncode}:\n{tail}")

    def stop(self) -> None:
        for _, process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for _, process in self.processes:
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()


def wait_for(check: Any, children: Children, deadline_s: float, what: str) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        children.check()
        if check():
            return
        time.sleep(0.5)
    raise RuntimeError(f"{what}: not within {deadline_s:g} s")


def insert_sources(dsn: str, urls: list[str]) -> None:
    with psycopg.connect(dsn) as conn:
        conn.execute(
            "INSERT INTO sources (name, feed_url, feed_poll_interval_minutes) "
            "SELECT 'feed-' || n, u, 1 FROM unnest(%s::text[]) WITH ORDINALITY AS t(u, n)",
            (urls,),
        )
        conn.execute(
            "INSERT INTO feed_state (source_id, feed_url, sitemap_next_poll_at) "
            "SELECT id, feed_url, 'infinity' FROM sources WHERE name LIKE 'feed-%%' "
            "ON CONFLICT (source_id) DO UPDATE SET sitemap_next_poll_at = 'infinity'"
        )


def stored_at(dsn: str) -> dict[str, float]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT url, fetched_at FROM raw_content").fetchall()
    return {url: at.timestamp() for url, at in rows}


# The benchmark's own record of when each URL was submitted: url_frontier.created_at is
# the submitter's `now`, which for a poll is when it started (before its host's turn).
SUBMITTED_TRIGGER = """
CREATE TABLE bench_submitted (url text PRIMARY KEY, at timestamptz NOT NULL);
CREATE FUNCTION bench_submitted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bench_submitted SELECT url, clock_timestamp() FROM new_rows
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER bench_submitted AFTER INSERT ON url_frontier
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bench_submitted();
"""


def record_submits(dsn: str) -> None:
    with psycopg.connect(dsn) as conn:
        conn.execute(SUBMITTED_TRIGGER)


def submitted_at(dsn: str) -> dict[str, float]:
    """When each URL was inserted into the frontier (its submit statement's end)."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT url, at FROM bench_submitted").fetchall()
    return {url: at.timestamp() for url, at in rows}


# An entry's marks, in order; its time is split into the parts between consecutive marks
# it has (a pushed entry has no `polled`: its first part is `appeared_to_submitted`).
MARKS = (
    "appeared",  # the entry is in the feed (this process's clock)
    "polled",  # the first answer of the feed that shows it (the feed's next poll)
    "submitted",  # its URL entered the frontier (url_frontier.created_at: the poll's
    # parse and submit since)
    "requested",  # the first answer of its page (claimable, claimed, its host's turn)
    "stored",  # raw_content.fetched_at (the fetch, extraction, sinks, completion)
)


def poll_gap_s(served: list[float], polled: float) -> float | None:
    """The time between the poll that showed the entry and the feed's poll before it:
    the interval as it was kept (60 s, the jitter's difference, any lateness)."""
    before = [t for t in served if t < polled]
    return polled - before[-1] if before else None


def spread(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p99": None, "max": None}
    return {
        "p50": round(percentile(values, 50), 2),
        "p99": round(percentile(values, 99), 2),
        "max": round(max(values), 2),
    }


def breakdown(marks: list[dict[str, float]]) -> dict[str, Any]:
    """p50/p99/max seconds of each part of the stored entries' times (`marks`: each
    entry's MARKS it has, and `poll_gap`), and the mean of each part over the slowest 1 %
    (at least 5): what the p99 is made of, since the parts' own p99s do not add up."""
    stored = sorted((m for m in marks if "stored" in m), key=lambda m: m["stored"] - m["appeared"])
    parts: dict[str, list[float]] = {}
    slow: dict[str, list[float]] = {}  # the same, of the slowest entries
    slowest = stored[-max(5, len(stored) // 100) :]
    for i, m in enumerate(stored):
        previous = "appeared"
        seconds = {}
        for mark in MARKS[1:]:
            if mark in m:
                seconds[f"{previous}_to_{mark}"] = m[mark] - m[previous]
                previous = mark
        if "poll_gap" in m:
            seconds["poll_gap"] = m["poll_gap"]
        for name, value in seconds.items():
            parts.setdefault(name, []).append(value)
            if i >= len(stored) - len(slowest):
                slow.setdefault(name, []).append(value)
    result: dict[str, Any] = {name: spread(values) for name, values in parts.items()}
    if slowest:
        result["slowest_mean_s"] = {
            "entries": len(slowest),
            "from_s": round(slowest[0]["stored"] - slowest[0]["appeared"], 2),
            **{name: round(sum(values) / len(values), 2) for name, values in slow.items()},
        }
    return result


def entry_marks(
    site: FeedSite, submitted: dict[str, float], stored: dict[str, float]
) -> list[dict[str, float]]:
    """Each new entry's marks (`breakdown`), from the site's answers and the database."""
    marks = []
    for n in range(site.feeds):
        url = site.article_url(n)
        if url not in site.appeared:
            continue
        m = {"appeared": site.appeared[url]}
        for key, times in (
            ("polled", site.polled),
            ("submitted", submitted),
            ("requested", site.requested),
            ("stored", stored),
        ):
            if url in times:
                m[key] = times[url]
        if "polled" in m:
            gap = poll_gap_s(site.served.get(n, []), m["polled"])
            if gap is not None:
                m["poll_gap"] = gap
        marks.append(m)
    return marks


def run_mode(
    pg: Any, mode: str, feeds: int, hosts: int, window_s: float, tick_s: float, seed: int
) -> dict[str, Any]:
    push = mode == "push"
    site = FeedSite(feeds, hosts, push=push).start()
    dsn = pg.migrated_database(f"bench_freshness_{mode}")
    insert_sources(dsn, [site.url(n) for n in range(feeds)])
    record_submits(dsn)
    pg.checkpoint()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),  # this checkout's frontier
        "FRONTIER_DATABASE_URL": dsn,
        "FRONTIER_ALLOW_PRIVATE_NETWORKS": "true",
        "FRONTIER_SEED_DEFAULT_SOURCES": "false",
        "FRONTIER_POLL_TICK_S": str(tick_s),
        "FRONTIER_LOG_LEVEL": os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
    }
    # A setting of this process's environment that the run does not set goes to the
    # children too (a comparison: FRONTIER_POLL_CONCURRENCY=... python -m bench.freshness).
    passed = {k: v for k, v in os.environ.items() if k.startswith("FRONTIER_") and k not in env}
    if passed:
        log(f"{mode}: with {', '.join(f'{k}={v}' for k, v in sorted(passed.items()))}")
    env.update(passed)
    result: dict[str, Any] = {"entries": feeds}
    with tempfile.TemporaryDirectory(prefix="bench-freshness-") as workdir:
        if os.environ.get("BENCH_KEEP_LOGS"):
            workdir = tempfile.mkdtemp(prefix="bench-freshness-logs-")
            log(f"logs in {workdir}")
        if push:
            port = free_port()
            env["FRONTIER_PUBLIC_URL"] = f"http://127.0.0.1:{port}"
        children = Children(env, Path(workdir))
        try:
            if push:
                children.start("serve", "serve", "--port", str(port))
            children.start("poll", "poll")
            children.start("fetch", "fetch")
            started = time.monotonic()
            olds = {site.old_url(n) for n in range(feeds)}
            wait_for(
                lambda: olds <= stored_at(dsn).keys() and site.subscribed() >= feeds * push,
                children,
                900,
                "the warm-up (every old entry stored, every subscription verified)",
            )
            result["warm_up_s"] = round(time.monotonic() - started, 1)
            log(f"warm: every feed polled and its old entry stored in {result['warm_up_s']} s")
            log(f"{mode}: {feeds} entries appear over {window_s:g} s")
            site.schedule(window_s, random.Random(seed))
            deadline_s = window_s + (PUSH_TARGET_S * 6 if push else INTERVAL_S + 4 * tick_s) + 60
            wait_for(
                lambda: (
                    len(site.appeared) == feeds
                    and len(stored_at(dsn).keys() & site.appeared.keys()) == feeds
                ),
                children,
                deadline_s,
                "every entry stored",
            )
        except RuntimeError as exc:
            log(f"{mode}: {exc}")
            result["error"] = str(exc)[:300]
        finally:
            children.stop()
            site.stop()
    stored = stored_at(dsn)
    latencies = sorted(stored[u] - t for u, t in site.appeared.items() if u in stored)
    parts = breakdown(entry_marks(site, submitted_at(dsn), stored))
    target = PUSH_TARGET_S if push else INTERVAL_S + POLL_SLACK_S
    result.update(
        stored=len(latencies),
        p50_s=round(percentile(latencies, 50), 2) if latencies else None,
        p99_s=round(percentile(latencies, 99), 2) if latencies else None,
        max_s=round(latencies[-1], 2) if latencies else None,
        target_p99_s=target,
        met=bool(latencies) and len(latencies) == feeds and percentile(latencies, 99) <= target,
        breakdown=parts,
    )
    log(f"{mode}: {result}")
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 feeds, 15 hosts, 60 s")
    parser.add_argument("--mode", choices=("poll", "push", "both"), default="both")
    parser.add_argument(
        "--tick", type=float, default=30.0, help="FRONTIER_POLL_TICK_S (production: 30)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--feeds", type=int, help="instead of the size's (1,000; 300 quick)")
    parser.add_argument("--hosts", type=int, help="instead of the size's (50; 15 quick)")
    parser.add_argument("--window", type=float, help="seconds (120; 60 quick)")
    args = parser.parse_args(argv)
    feeds, hosts, window_s = (300, 15, 60.0) if args.quick else (1_000, 50, 120.0)
    feeds, hosts = args.feeds or feeds, args.hosts or hosts
    window_s = args.window or window_s
    modes = ("poll", "push") if args.mode == "both" else (args.mode,)
    result: dict[str, Any] = {
        "feeds": feeds,
        "hosts": hosts,
        "window_s": window_s,
        "interval_s": INTERVAL_S,
        "tick_s": args.tick,
    }
    with running_server() as pg:
        for mode in modes:
            result[mode] = run_mode(pg, mode, feeds, hosts, window_s, args.tick, args.seed)
    emit_result(result)


if __name__ == "__main__":
    main()
