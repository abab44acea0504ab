"""Prometheus metrics read from the database, so every process's work is counted once:
a collector registered in the app's own `CollectorRegistry` (never the global one) serves
the snapshot the `/metrics` handler has just read.

Counters come from `event_counts` (maintained by triggers, see migration 0004) and the
frontier's counters; the queue-depth gauge from `frontier_counts`. The latency histograms
of fetches and polls come from `event_counts` too: the fetch log's trigger counts each
row's `elapsed_ms` into buckets (migration 0021), so a fetcher, a poller and a spider in
other processes are all in the one histogram this process serves. The queue lag and the
hosts backing off come from the host summaries (`host_state`, one row per host), the
failing sources from `feed_state`/`spider_state`: a scrape never scans `url_frontier` or
`fetch_log`. The process metrics (CPU, memory, open files) are this API process's own
(prometheus_client's process collector).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from prometheus_client import CollectorRegistry, ProcessCollector, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from frontier.api.queries import ApiQueries
from frontier.clock import utcnow
from frontier.db import Database
from frontier.outbox import OutboxRepository
from frontier.states import FetchKind, Origin, UrlStatus

POLL_KINDS = (FetchKind.FEED, FetchKind.SITEMAP)
# Upper bounds (ms) of the latency buckets: migration 0021's BUCKETS_MS, the same list.
LATENCY_BUCKETS_MS = (50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000)


@dataclass(slots=True)
class Snapshot:
    claims: int = 0
    sink_errors: int = 0
    archive_errors: dict[str, int] = field(default_factory=dict)  # errno name -> n
    log: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, outcome) -> n
    depth: dict[str, int] = field(default_factory=dict)  # status -> n
    by_origin: dict[str, int] = field(default_factory=dict)  # origin -> n
    latency: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, le) -> n
    latency_ms: dict[str, int] = field(default_factory=dict)  # kind -> sum of ms
    hosts_backing_off: int = 0
    queue_lag_s: float = 0.0  # how long the oldest due URL has waited
    failing_sources: int = 0
    # reason -> (hosts, their pending URLs, the longest wait in seconds)
    held_back: dict[str, tuple[int, int, float]] = field(default_factory=dict)
    # sink -> (rows waiting in the outbox, the oldest one's age in seconds)
    outbox: dict[str, tuple[int, float]] = field(default_factory=dict)


class DatabaseCollector:
    """Yields the last snapshot; `scrape()` refreshes it and renders the registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self._snapshot = Snapshot()
        self._lock = asyncio.Lock()  # one scrape at a time renders its own snapshot
        self.registry.register(self)
        ProcessCollector(registry=self.registry)  # this process's CPU, memory, files

    async def scrape(self, db: Database) -> bytes:
        async with self._lock:
            self._snapshot = await read_snapshot(db)
            return generate_latest(self.registry)

    def collect(self) -> Iterator[Metric]:
        snap = self._snapshot
        claims = CounterMetricFamily("frontier_claims", "URLs claimed by fetchers.")
        claims.add_metric([], snap.claims)
        yield claims
        fetches = CounterMetricFamily(
            "frontier_fetches",
            "Fetch attempts (pages, robots.txt, spider) by outcome.",
            labels=["kind", "outcome"],
        )
        polls = CounterMetricFamily(
            "frontier_polls", "Feed and sitemap polls by outcome.", labels=["kind", "outcome"]
        )
        for (kind, outcome), n in sorted(snap.log.items()):
            (polls if kind in POLL_KINDS else fetches).add_metric([kind, outcome], n)
        yield fetches
        yield polls
        submitted = CounterMetricFamily(
            "frontier_urls_submitted",
            "URLs accepted into the frontier by origin (new URLs; duplicates not counted).",
            labels=["origin"],
        )
        for origin in Origin:
            submitted.add_metric([str(origin)], snap.by_origin.get(origin, 0))
        yield submitted
        depth = GaugeMetricFamily(
            "frontier_queue_depth", "URLs in the frontier by status.", labels=["status"]
        )
        for status in UrlStatus:
            depth.add_metric([str(status)], snap.depth.get(status, 0))
        yield depth
        sink = CounterMetricFamily(
            "frontier_sink_errors", "Fetched URLs the content sink could not store (failed)."
        )
        sink.add_metric([], snap.sink_errors)
        yield sink
        archive = CounterMetricFamily(
            "frontier_archive_errors",
            "WARC archive writes the disk refused, by errno (ENOSPC: full); the fetcher "
            "paused claiming and the pages were fetched again later.",
            labels=["code"],
        )
        for code, n in sorted(snap.archive_errors.items()):
            archive.add_metric([code], n)
        yield archive
        yield from _histograms(snap)
        lag = GaugeMetricFamily(
            "frontier_queue_lag_seconds",
            "How long the oldest due URL has been waiting (0 when none is overdue).",
        )
        lag.add_metric([], snap.queue_lag_s)
        yield lag
        backoff = GaugeMetricFamily(
            "frontier_hosts_backing_off", "Hosts in backoff after failures (429/503, errors)."
        )
        backoff.add_metric([], snap.hosts_backing_off)
        yield backoff
        yield from _politeness(snap)
        failing = GaugeMetricFamily(
            "frontier_sources_failing",
            "Enabled sources whose last feed poll, sitemap poll or spider run failed.",
        )
        failing.add_metric([], snap.failing_sources)
        yield failing
        yield from _outbox(snap)


def _outbox(snap: Snapshot) -> Iterator[Metric]:
    backlog = GaugeMetricFamily(
        "frontier_sink_backlog",
        "Documents waiting in the outbox for an optional sink (frontier.outbox).",
        labels=["sink"],
    )
    oldest = GaugeMetricFamily(
        "frontier_sink_oldest_pending_seconds",
        "How long the oldest document waiting for an optional sink has waited.",
        labels=["sink"],
    )
    for sink, (n, age) in sorted(snap.outbox.items()):
        backlog.add_metric([sink], n)
        oldest.add_metric([sink], age)
    yield backlog
    yield oldest


# hosts.sql's rule: a request in flight, the host's politeness key busy (another host of
# the key: politeness_keys.sql), the delay since the last answer, a backoff after 429/503
# or failures
HELD_BACK_REASONS = ("busy", "key_busy", "delay", "backoff")


def _politeness(snap: Snapshot) -> Iterator[Metric]:
    labels = ["reason"]
    hosts = GaugeMetricFamily(
        "frontier_politeness_held_hosts",
        "Hosts whose work is due but held back by politeness, by reason (busy: a request "
        "in flight; key_busy: another host of its politeness key has a request in flight "
        "or its delay runs; delay: the delay since the last answer; backoff: after "
        "429/503).",
        labels=labels,
    )
    urls = GaugeMetricFamily(
        "frontier_politeness_held_urls",
        "Pending URLs of the hosts held back by politeness, by reason.",
        labels=labels,
    )
    wait = GaugeMetricFamily(
        "frontier_politeness_wait_seconds",
        "How long the longest-waiting due URL of a held-back host has waited for its "
        "host, by reason.",
        labels=labels,
    )
    for reason in HELD_BACK_REASONS:
        held_hosts, held_urls, longest = snap.held_back.get(reason, (0, 0, 0.0))
        hosts.add_metric([reason], held_hosts)
        urls.add_metric([reason], held_urls)
        wait.add_metric([reason], longest)
    yield hosts
    yield urls
    yield wait


def _histograms(snap: Snapshot) -> Iterator[Metric]:
    fetches = HistogramMetricFamily(
        "frontier_fetch_duration_seconds",
        "Time of fetch attempts (pages, robots.txt, spider runs) from the fetch log.",
        labels=["kind"],
    )
    polls = HistogramMetricFamily(
        "frontier_poll_duration_seconds",
        "Time of feed and sitemap polls from the fetch log.",
        labels=["kind"],
    )
    for kind in sorted(snap.latency_ms):
        running, buckets = 0, []
        for bound in LATENCY_BUCKETS_MS:
            running += snap.latency.get((kind, str(bound)), 0)
            buckets.append((str(bound / 1000), running))
        buckets.append(("+Inf", running + snap.latency.get((kind, "inf"), 0)))
        family = polls if kind in POLL_KINDS else fetches
        family.add_metric([kind], buckets, snap.latency_ms[kind] / 1000)
    yield fetches
    yield polls


async def read_snapshot(db: Database, *, now: datetime | None = None) -> Snapshot:
    views = ApiQueries(db)
    snap = Snapshot()
    at = now or utcnow()
    for row in await views.event_totals():
        if row["event"] == "claim":
            snap.claims += row["n"]
        elif row["event"] == "sink_error":
            snap.sink_errors += row["n"]
        elif row["event"] == "archive_error":
            snap.archive_errors[row["kind"]] = snap.archive_errors.get(row["kind"], 0) + row["n"]
        elif row["event"] == "log":
            key = (row["kind"], row["outcome"])
            snap.log[key] = snap.log.get(key, 0) + row["n"]
        elif row["event"] == "latency":
            key = (row["kind"], row["outcome"])
            snap.latency[key] = snap.latency.get(key, 0) + row["n"]
        elif row["event"] == "latency_ms":
            snap.latency_ms[row["kind"]] = snap.latency_ms.get(row["kind"], 0) + row["n"]
    for row in await views.queue_depth():
        snap.depth[row["status"]] = snap.depth.get(row["status"], 0) + row["n"]
        snap.by_origin[row["origin"]] = snap.by_origin.get(row["origin"], 0) + row["n"]
    hosts = await views.metrics_hosts(at)
    snap.hosts_backing_off = hosts["backing_off"]
    oldest = hosts["oldest_due_at"]
    if oldest is not None and oldest.tzinfo is not None and oldest < at:
        snap.queue_lag_s = (at - oldest).total_seconds()
    for row in await views.metrics_politeness(at):
        snap.held_back[row["reason"]] = (row["hosts"], row["urls"], row["longest_wait_s"])
    snap.failing_sources = len(await views.failing_sources())
    for line in await OutboxRepository(db).status():
        age = (at - line.oldest_at).total_seconds() if line.oldest_at else 0.0
        snap.outbox[line.sink] = (line.backlog, max(age, 0.0))
    return snap
