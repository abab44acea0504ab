"""Shared pieces of the fetcher tests: a Fetcher over the test database and a real safe
client (private networks allowed: the sites are on 127.0.0.0/8), and row lookups."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

from fetcher.config import FetcherConfig
from fetcher.extract_pool import ExtractionPool
from fetcher.extract_thread import InProcessExtraction
from fetcher.worker import Fetcher
from frontier.clock import utcnow
from frontier.db import Database
from frontier.parse_pool import ParsePool
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy, SourceRef
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.sinks import Sink
from frontier.sinks.postgres import PostgresSink
from frontier.states import Origin
from frontier.urls import normalize_url, url_hash
from tests.local_site import LocalSite

UA = "frontier-test/1.0 (+http://example.org/bot)"


@asynccontextmanager
async def fetcher_for(
    db: Database,
    *,
    delay_ms: int = 0,
    sink: Sink | None = None,
    max_retries: int = 2,
    timeout_s: float = 10.0,
    extraction: ExtractionPool | InProcessExtraction | None = None,
    allow_private_networks: bool = True,
    max_body_bytes: int = 1_000_000,
    parser: ParsePool | None = None,
    **config: Any,
) -> AsyncIterator[Fetcher]:
    limits = HttpLimits(
        UA,
        allow_private_networks=allow_private_networks,
        total_timeout_s=timeout_s,
        read_timeout_s=timeout_s,
        max_body_bytes=max_body_bytes,
    )
    policy = QueuePolicy(default_delay_ms=delay_ms, max_retries=max_retries, lease_seconds=60)
    values: dict[str, Any] = {"user_agent": UA, "worker_id": "w-test", "concurrency": 10}
    values.update(config)
    async with SafeClient(limits) as client:
        config_ = FetcherConfig(**values)
        yield Fetcher(db, client, sink or PostgresSink(db), config_, policy, extraction, parser)


def after(seconds: float) -> datetime:
    """A moment `seconds` from now: `run_once(now=after(...))` claims what falls due by
    then, in place of rewinding `next_fetch_at` and `next_allowed_at` in the rows."""
    return utcnow() + timedelta(seconds=seconds)


async def manual_ref(db: Database, rate_limit_ms: int | None = None) -> SourceRef:
    source_id = await db.fetchval("SELECT id FROM sources WHERE name = 'manual'")
    return SourceRef(source_id, priority=5, rate_limit_ms=rate_limit_ms)


async def submit(
    db: Database,
    *urls: str,
    delay_ms: int = 0,
    meta: dict[str, Any] | None = None,
    origin: Origin = Origin.MANUAL,
) -> None:
    ref = await manual_ref(db)
    queue = QueueRepository(db, QueuePolicy(default_delay_ms=delay_ms))
    result = await queue.submit([Candidate(u, ref, origin, discovery_meta=meta) for u in urls])
    assert not result.rejected, result.rejected


async def frontier_row(db: Database, url: str) -> dict[str, Any]:
    record = await db.fetchrow(
        "SELECT * FROM url_frontier WHERE url_hash = $1", url_hash(normalize_url(url))
    )
    assert record is not None, url
    return dict(record)


async def host_row(db: Database, host: str) -> dict[str, Any]:
    record = await db.fetchrow("SELECT * FROM host_state WHERE host = $1", host)
    assert record is not None, host
    return dict(record)


def article(title: str, paragraphs: int = 6, word: str = "news") -> str:
    body = "".join(
        f"<p>{title} paragraph {i}: the {word} of the day is reported here in full sentences "
        f"so that extraction finds a real article body with enough words in it.</p>"
        for i in range(paragraphs)
    )
    return (
        f"<!doctype html><html lang='en'><head><title>{title}</title>"
        f"<meta name='author' content='Ann Writer'></head><body><nav>menu home about</nav>"
        f"<article><h1>{title}</h1>{body}</article><footer>copyright</footer></body></html>"
    )


async def fetch_stored(
    db: Database, site: LocalSite, path: str, meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Submit `site`'s `path`, fetch it and return the stored
    document; checks it is stored once, `fetched`, at one page request."""
    await submit(db, site.url(path), meta=meta)
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    row = await frontier_row(db, site.url(path))
    assert (row["status"], row["dead_reason"]) == ("fetched", None), row["last_error"]
    assert len(site.hits(path)) == 1
    docs = await db.fetch("SELECT * FROM raw_content")
    assert len(docs) == 1 and docs[0]["url_hash"] == row["url_hash"]
    return dict(docs[0])
