"""A fetch process from settings: the safe client, the content sink, the extraction pool,
the browsers that render pages (fetcher.render_step) and the worker, with SIGTERM/SIGINT
wired to a graceful stop (the pools' processes exit before it returns). Used by
`frontier fetch` (and `frontier up`)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from contextlib import contextmanager

from fetcher.config import FetcherConfig
from fetcher.extract_pool import ExtractionPool
from fetcher.extract_thread import InProcessExtraction
from fetcher.render_step import RenderStep
from fetcher.summary import FetchSummary
from fetcher.worker import Fetcher
from frontier.db import Database
from frontier.loops import stop_event
from frontier.outbox import OutboxDelivery, OutboxPolicy, OutboxRepository
from frontier.parse_pool import ParsePool
from frontier.queue_values import QueuePolicy
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits, raise_open_file_limit
from frontier.settings import Settings
from frontier.sinks.configured import open_sinks
from frontier.sinks.installed import SinkRegistry


def http_limits(settings: Settings, concurrency: int) -> HttpLimits:
    """The safe client of a fetch process: FRONTIER_ALLOW_PRIVATE_NETWORKS decides the SSRF
    guard; connections sized to the concurrency."""
    return HttpLimits.from_settings(
        settings,
        total_timeout_s=settings.fetch_timeout_s,
        read_timeout_s=min(20.0, settings.fetch_timeout_s),
        max_body_bytes=settings.fetch_max_body_bytes,
        max_connections=max(100, concurrency * 2),
    )


def extraction_for(config: FetcherConfig) -> ExtractionPool | InProcessExtraction:
    """Where the process extracts articles: its pool of worker processes, or a thread of
    its own when `extract_processes` is 0 (or extraction is off). Close it when done."""
    if config.extract and config.extract_processes:
        return ExtractionPool(
            config.extract_processes,
            preload=config.extract_preload,
            timeout_s=config.extract_timeout_s,
            memory_mb=config.extract_memory_mb,
        )
    return InProcessExtraction(timeout_s=config.extract_timeout_s)


# The young generation's threshold while the process fetches: ten times Python's 700. A
# page's tasks, futures, rows and responses are mostly freed by reference counting, so the
# collector's passes every 700 allocations found little; at 7,000 they cost a standard
# quick run 10 ms of CPU instead of 53 (bench/RESULTS.md, ninth session).
YOUNG_THRESHOLD = 7_000


@contextmanager
def frozen_heap() -> Iterator[None]:
    """What the process has built before it fetches (modules, the public suffix list, the
    pools and sessions) lives as long as the fetch: left out of the cyclic collector's
    full passes while it runs (gc.freeze, after a collection, so no garbage is kept),
    which otherwise walk all of it again every few thousand pages, and more often with the
    outbox's deliveries (bench/RESULTS.md, issue 33); and the young generation is
    collected less often (YOUNG_THRESHOLD)."""
    gc.collect()
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


async def run_fetcher(
    settings: Settings,
    db: Database,
    *,
    concurrency: int | None = None,
    until_idle: bool = False,
    stop: asyncio.Event | None = None,
    extract: bool = True,
    extract_processes: int | None = None,
    installed: SinkRegistry | None = None,
) -> FetchSummary:
    """`concurrency` and `extract_processes` replace their settings when given;
    `installed`: the sinks to open the configured ones from (default: the entry-point
    group's, frontier.sinks.installed)."""
    overrides: dict[str, object] = {"extract": extract}
    if concurrency:
        overrides["concurrency"] = concurrency
    if extract_processes is not None:
        overrides["extract_processes"] = extract_processes
    config = FetcherConfig.from_settings(settings, **overrides)
    raise_open_file_limit()
    async with stop_event(stop) as stopping:
        sinks = await open_sinks(settings, db, installed)
        extraction = extraction_for(config)
        # The optional sinks' delivery (frontier.outbox), beside the fetch loop.
        delivery = OutboxDelivery(
            OutboxRepository(db),
            sinks.optional,
            config.worker_id,
            OutboxPolicy.from_settings(settings),
        )
        delivered = asyncio.Event()
        delivering = asyncio.create_task(delivery.run(delivered))
        try:
            limits = http_limits(settings, config.concurrency)
            renderer = RenderStep.from_settings(settings, db, limits)
            async with (
                SafeClient(limits) as client,
                ParsePool(config.parse) as parser,
            ):
                policy = QueuePolicy.from_settings(settings)
                fetcher = Fetcher(
                    db,
                    client,
                    sinks.required,
                    config,
                    policy,
                    extraction,
                    parser,
                    renderer,
                    optional_sinks=list(sinks.optional),
                    outbox_payloads=sinks.outbox_payloads,
                )
                try:
                    with frozen_heap():
                        summary = await fetcher.run(until_idle=until_idle, stop=stopping)
                finally:
                    await renderer.close()  # its browsers exit
            if until_idle and not stopping.is_set():
                delivered.set()
                await delivering
                await delivery.drain()  # what is due now; what waits for a retry stays
            return summary
        finally:
            delivered.set()
            await asyncio.gather(delivering, return_exceptions=True)
            await delivery.close()
            await asyncio.to_thread(extraction.close)  # waits for the workers to exit
            await sinks.required.close()
