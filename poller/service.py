"""What the `frontier poll` command runs, given an open database and the settings: the
CLI stays a thin wrapper and imports this lazily."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import Any

from frontier.db import Database
from frontier.queue import QueuePolicy
from frontier.safe_http import HttpLimits, SafeClient
from frontier.settings import Settings
from frontier.sources import SourceRepository
from poller.fire import FireResult, fire_source
from poller.policy import PollPolicy
from poller.scheduler import Poller
from poller.seeding import seed_defaults

log = logging.getLogger(__name__)


def _client(settings: Settings, policy: PollPolicy) -> SafeClient:
    return SafeClient(HttpLimits.from_settings(
        settings, max_connections=max(100, policy.concurrency * 2),
        max_connections_per_host=policy.per_host,
        max_body_bytes=policy.max_sitemap_bytes,
    ))  # fmt: skip


async def poll_once(db: Database, settings: Settings) -> list[dict[str, Any]]:
    policy = PollPolicy.from_settings(settings)
    async with _client(settings, policy) as client:
        poller = Poller(db, client, policy, QueuePolicy.from_settings(settings))
        return await poller.run_once()


async def fire_once(db: Database, settings: Settings, name: str, dry_run: bool) -> FireResult:
    policy = PollPolicy.from_settings(settings)
    source = await SourceRepository(db).get(name)
    async with _client(settings, policy) as client:
        return await fire_source(db, client, source.id, dry_run=dry_run, policy=policy)


async def poll_forever(db: Database, settings: Settings) -> None:
    policy = PollPolicy.from_settings(settings)
    if settings.seed_default_sources:
        seeded = await seed_defaults(db)
        if seeded.added:
            log.warning("seeded %d default sources", len(seeded.added))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    async with _client(settings, policy) as client:
        poller = Poller(db, client, policy, QueuePolicy.from_settings(settings))
        await poller.run_forever(stop)
