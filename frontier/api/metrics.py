"""Prometheus metrics read from the database, so every process's work is counted once:
a collector registered in the app's own `CollectorRegistry` (never the global one) serves
the snapshot the `/metrics` handler has just read.

Counters come from `event_counts` (maintained by triggers, see migration 0004) and the
frontier's counters; the queue-depth gauge from `frontier_counts`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from frontier.api.queries import ApiQueries
from frontier.db import Database
from frontier.states import FetchKind, Origin, UrlStatus

POLL_KINDS = (FetchKind.FEED, FetchKind.SITEMAP)


@dataclass(slots=True)
class Snapshot:
    claims: int = 0
    sink_errors: int = 0
    log: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, outcome) -> n
    depth: dict[str, int] = field(default_factory=dict)  # status -> n
    by_origin: dict[str, int] = field(default_factory=dict)  # origin -> n


class DatabaseCollector:
    """Yields the last snapshot; `scrape()` refreshes it and renders the registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self._snapshot = Snapshot()
        self._lock = asyncio.Lock()  # one scrape at a time renders its own snapshot
        self.registry.register(self)

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


async def read_snapshot(db: Database) -> Snapshot:
    views = ApiQueries(db)
    snap = Snapshot()
    for row in await views.event_totals():
        if row["event"] == "claim":
            snap.claims += row["n"]
        elif row["event"] == "sink_error":
            snap.sink_errors += row["n"]
        elif row["event"] == "log":
            key = (row["kind"], row["outcome"])
            snap.log[key] = snap.log.get(key, 0) + row["n"]
    for row in await views.queue_depth():
        snap.depth[row["status"]] = snap.depth.get(row["status"], 0) + row["n"]
        snap.by_origin[row["origin"]] = snap.by_origin.get(row["origin"], 0) + row["n"]
    return snap
