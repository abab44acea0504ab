"""The poller as a service: the one entry point the edge calls (`frontier poll`,
`frontier up`, the API's manual fire). Each function builds what the poller needs from
`Settings` and an open `Database` (the policy, the safe client, the `Poller`), as
`fetcher.service` does for a fetch process:

    poll_once(settings, db)            poll every source due now, once (and, with
                                       FRONTIER_PUBLIC_URL, one WebSub look)
    run_poller(settings, db, stop=)    tick until `stop` (without one: SIGTERM/SIGINT),
                                       with the WebSub loop beside it when it is on
    poll_forever(settings, db)         `run_poller` (seeding the defaults only if asked)
    seed(settings, db)                 the default sources, unless seeding is off
                                       (`frontier up` calls it; `frontier poll` only
                                       with --seed-defaults)
    fire(settings, db, id, client=)    poll one source now (what the API is given)
    fire_once(settings, db, name)      the same by name, with a client of its own (CLI)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from uuid import UUID

from frontier.db import Database
from frontier.host_slots import HostSlots
from frontier.loops import stop_event
from frontier.parse_pool import ParsePool
from frontier.queue_values import QueuePolicy
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.settings import Settings
from frontier.source_kinds import load_kinds
from frontier.source_specs import SpecImportSummary
from frontier.sources import SourceRepository
from poller.fire import FireResult, fire_source
from poller.policy import PollPolicy
from poller.poll_summary import PollSummary
from poller.scheduler import Poller
from poller.seeding import seed_defaults
from poller.websub_push import WebSubLoop

log = logging.getLogger(__name__)


def poll_client(settings: Settings, policy: PollPolicy, db: Database) -> SafeClient:
    """The poller's safe client: connections sized to its concurrency, bodies capped at
    the largest sitemap it reads, each request holding its host (frontier/host_slots.py)."""
    limits = HttpLimits.from_settings(
        settings,
        max_connections=max(100, policy.concurrency * 2),
        max_connections_per_host=policy.per_host,
        max_body_bytes=policy.max_sitemap_bytes,
    )
    slots = HostSlots.from_settings(settings, db, "poller")
    return SafeClient(limits, slots)


async def poll_once(settings: Settings, db: Database) -> list[PollSummary]:
    """Poll every source due now; one summary per source polled (each logged, as the
    polls of `poll_forever` are)."""
    async with _poller(settings, db) as poller:
        summaries = await poller.run_once()
        if poller.policy.websub.enabled:
            await _push(poller).run_once()
    for summary in summaries:
        summary.log()
    return summaries


@contextlib.asynccontextmanager
async def _poller(settings: Settings, db: Database) -> AsyncIterator[Poller]:
    """A `Poller` with its safe client and its parse pool, both closed at the end."""
    policy = PollPolicy.from_settings(settings)
    parser = ParsePool(policy.parse)
    parser.warm()  # its fork server imports the parsers while the first polls are claimed
    async with parser, poll_client(settings, policy, db) as client:
        queue_policy = QueuePolicy.from_settings(settings)
        yield Poller(db, client, policy, queue_policy, kinds=load_kinds(), parser=parser)


async def run_poller(
    settings: Settings,
    db: Database,
    *,
    stop: asyncio.Event | None = None,
    on_polled: Callable[[list[PollSummary]], None] | None = None,
    on_failed: Callable[[Exception], None] | None = None,
) -> None:
    """Poll what is due every tick until `stop` is set. Given a `stop`, the caller owns
    SIGTERM/SIGINT (`frontier up`); without one, those signals stop the poller.
    `on_polled` gets each tick's summaries, `on_failed` a tick that failed (default: log)."""
    async with stop_event(stop) as stopping, _poller(settings, db) as poller:
        if not poller.policy.websub.enabled:
            await poller.run_forever(stopping, on_polled=on_polled, on_failed=on_failed)
            return
        await asyncio.gather(
            poller.run_forever(stopping, on_polled=on_polled, on_failed=on_failed),
            _push(poller).run_forever(stopping),
        )


def _push(poller: Poller) -> WebSubLoop:
    """The WebSub loop beside a poller, sharing its client and parse pool."""
    return WebSubLoop(poller.db, poller.client, poller.policy, poller.queue.policy, poller.parser)


async def seed(settings: Settings, db: Database) -> SpecImportSummary | None:
    """Add the default sources not seeded before; None when FRONTIER_SEED_DEFAULT_SOURCES
    is off."""
    if not settings.seed_default_sources:
        return None
    return await seed_defaults(db)


async def poll_forever(
    settings: Settings,
    db: Database,
    *,
    seed_defaults: bool = False,
    stop: asyncio.Event | None = None,
) -> None:
    """`frontier poll`: poll until SIGTERM/SIGINT (or `stop`). The default sources are
    seeded first only with `seed_defaults` (`--seed-defaults`): a poller service deployed
    next to an operator's own sources must not add five public news sites to them."""
    if seed_defaults:
        seeded = await seed(settings, db)
        if seeded is not None and seeded.added:
            log.warning("seeded %d default sources", len(seeded.added))
    await run_poller(settings, db, stop=stop)


async def fire(
    settings: Settings, db: Database, source_id: UUID, *, dry_run: bool, client: SafeClient
) -> FireResult:
    """Poll source `source_id` now (a dry run only reports what it would submit). A real
    fire is rate limited per source: `FireRateLimited` (a `RetryLater`) if it comes too
    soon or a poll holds the source."""
    policy = PollPolicy.from_settings(settings)
    async with ParsePool(policy.parse) as parser:
        return await fire_source(
            db, client, source_id, dry_run=dry_run, policy=policy, kinds=load_kinds(), parser=parser
        )


async def fire_once(settings: Settings, db: Database, name: str, dry_run: bool) -> FireResult:
    """`frontier poll --source NAME`: `fire` by name, with a client of its own."""
    source = await SourceRepository(db).get(name)
    async with poll_client(settings, PollPolicy.from_settings(settings), db) as client:
        return await fire(settings, db, source.id, dry_run=dry_run, client=client)
