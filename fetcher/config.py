"""The fetcher's knobs as one frozen value, built from settings at the edge."""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from fetcher.allocators import preload_for
from frontier.archive.upkeep import Retention
from frontier.parse_pool import ParseLimits
from frontier.politeness_key import KeyMode
from frontier.settings import Settings


def default_worker_id() -> str:
    """host:pid:random, unique per process (claims and host leases are keyed by it)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def archive_dir(settings: Settings) -> Path | None:
    """Where the WARC archive lives: FRONTIER_ARCHIVE_DIR, else FRONTIER_HOME/archive;
    None when FRONTIER_ARCHIVE is false."""
    if not settings.archive:
        return None
    return archive_location(settings)


def archive_location(settings: Settings) -> Path:
    """Where the WARC archive is (or was) kept, whether archiving is on or not (for
    `frontier reextract`, which reads it)."""
    return settings.archive_dir or settings.home / "archive"


@dataclass(frozen=True, slots=True)
class FetcherConfig:
    user_agent: str
    worker_id: str = field(default_factory=default_worker_id)
    concurrency: int = 10
    batch_size: int | None = None  # URLs per claim; None: half the concurrency (pipelining)
    robots_ttl_hours: int = 24
    robots_max_crawl_delay_ms: int = 30_000
    robots_retry_s: float = 300.0
    robots_lease_s: float = 90.0  # a host's lease while its robots.txt is fetched
    sink_retry_s: float = 60.0
    sink_retry_max_s: float = 3600.0
    shutdown_s: float = 30.0
    idle_poll_s: float = 1.0
    maintenance_every_s: float = 30.0
    fetch_log_retention: timedelta = timedelta(days=30)
    extract: bool = True  # False only for benchmarks: store pages without extraction
    extract_processes: int = 0  # extraction worker processes; 0: a thread of this process
    extract_preload: str | None = None  # the workers' allocator (fetcher.allocators)
    extract_timeout_s: float = 30.0  # a page's extraction time limit
    extract_memory_mb: int = 1024  # an extraction worker's address space limit
    parse: ParseLimits = field(default_factory=ParseLimits)  # robots.txt's parse processes
    archive_dir: Path | None = None  # the WARC archive (frontier.archive); None: off
    archive_rotate_bytes: int = 1 << 30
    archive_retention: Retention = field(default_factory=Retention)
    document_versions: int = 10  # earlier versions kept per document (frontier.versions)
    politeness_key: KeyMode = KeyMode.HOST  # a source without its own (frontier.politeness_key)
    heartbeat_file: Path | None = None  # touched as the claim loop goes round (fetcher.heartbeat)

    @property
    def claim_batch(self) -> int:
        return self.batch_size or max(1, min(100, self.concurrency // 2))

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: object) -> FetcherConfig:
        values: dict[str, object] = {
            "user_agent": settings.user_agent,
            "concurrency": settings.fetch_concurrency,
            "robots_ttl_hours": settings.robots_ttl_hours,
            "robots_max_crawl_delay_ms": settings.robots_max_crawl_delay_ms,
            "robots_retry_s": settings.robots_retry_s,
            "robots_lease_s": max(90.0, settings.fetch_timeout_s * 3),
            "sink_retry_s": settings.sink_retry_s,
            "sink_retry_max_s": settings.sink_retry_max_s,
            "shutdown_s": settings.fetch_shutdown_s,
            "fetch_log_retention": timedelta(days=settings.fetch_log_retention_days),
            "extract_processes": (
                usable_cores() if settings.extract_processes is None else settings.extract_processes
            ),
            "extract_preload": preload_for(settings.extract_allocator),
            "extract_timeout_s": settings.extract_timeout_s,
            "extract_memory_mb": settings.extract_memory_mb,
            "parse": ParseLimits.from_settings(settings),
            "archive_dir": archive_dir(settings),
            "archive_rotate_bytes": settings.archive_rotate_bytes,
            "archive_retention": Retention(
                max_age=(
                    timedelta(days=settings.archive_retention_days)
                    if settings.archive_retention_days
                    else None
                ),
                max_bytes=settings.archive_max_bytes,
            ),
            "politeness_key": KeyMode(settings.politeness_key),
            "document_versions": settings.document_versions,
            "heartbeat_file": settings.fetch_heartbeat_file,
        }
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]
