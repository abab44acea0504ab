"""What every request handler may use, built once per app and kept on `app.state`:
settings, the database (`db` for writes; `reads`, the same pool with each statement
bounded by FRONTIER_API_READ_TIMEOUT_S, for reads), the gate of expensive reads, the
throttle of wrong tokens, the app's
own Prometheus registry, the service functions the edge gave the app (`fire`, the poller's
`poller.service.fire`; `reextract`, the fetcher's `fetcher.reextract.run_reextract`: the
API imports no service, tests/unit/test_layout.py holds it to that) and (made on first
use) the safe HTTP client it needs and the one-connection pool of /healthz."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from uuid import UUID

from fastapi import Request

from frontier.api.login_throttle import LoginThrottle
from frontier.api.read_gate import ReadGate
from frontier.db import Database
from frontier.settings import Settings

if TYPE_CHECKING:
    from frontier.api.metrics import DatabaseCollector
    from frontier.documents import DocumentFilter, DocumentReader
    from frontier.parse_pool import ParsePool
    from frontier.safe_http.client import SafeClient


HEALTH_TIMEOUT_S = 2.0  # /healthz's connect and probe: an answer within seconds, always


class Answer(Protocol):
    """What a service function answers: the route sends its JSON."""

    def as_json(self) -> dict[str, Any]: ...


class FireSource(Protocol):
    """Poll one source now (a dry run only reports what it would submit); raises
    `frontier.errors.RetryLater` when a real fire comes too soon."""

    async def __call__(
        self,
        settings: Settings,
        db: Database,
        source_id: UUID,
        *,
        dry_run: bool,
        client: SafeClient,
    ) -> Answer: ...


class Reextract(Protocol):
    """Run extraction again over the archived responses of the documents `where` selects
    (a dry run writes nothing); raises asyncpg.InsufficientPrivilegeError when the
    database role may not rewrite documents."""

    async def __call__(
        self, settings: Settings, db: Database, where: DocumentFilter, *, dry_run: bool
    ) -> Answer: ...


@dataclass(slots=True)
class ApiContext:
    settings: Settings
    db: Database
    collector: DatabaseCollector
    fire: FireSource | None = None  # None: this app cannot fire sources
    reextract: Reextract | None = None  # None: this app cannot re-extract
    client: SafeClient | None = None  # for the manual fire; closed with the app
    owns_client: bool = False
    client_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    reader: DocumentReader | None = None  # the configured sink's reader, made on first use
    reads: Database = field(init=False)  # `db` with each statement bounded in time
    read_gate: ReadGate = field(init=False)
    login_throttle: LoginThrottle = field(default_factory=LoginThrottle)
    probe: Database | None = None  # /healthz's own connection, made on first use
    probe_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    parser: ParsePool | None = None  # for what is parsed from outside, made on first use
    reextracting: asyncio.Lock = field(default_factory=asyncio.Lock)  # one run at a time

    def __post_init__(self) -> None:
        self.reads = self.db.bounded(self.settings.api_read_timeout_s)
        self.read_gate = ReadGate.for_pool(
            self.settings.api_reads_per_client, self.settings.db_pool_size
        )

    async def health_db(self) -> Database:
        """A connection of /healthz's own, so that it never waits behind the pool's work
        (the shared pool when the database was not opened from a DSN)."""
        async with self.probe_lock:
            if self.probe is None:
                self.probe = await self.db.spare(timeout_s=HEALTH_TIMEOUT_S) or self.reads
            return self.probe

    async def http_client(self) -> SafeClient:
        async with self.client_lock:
            if self.client is None:
                from frontier.host_slots import HostSlots
                from frontier.safe_http.client import SafeClient
                from frontier.safe_http.limits import HttpLimits

                limits = HttpLimits.from_settings(self.settings)
                slots = HostSlots.from_settings(self.settings, self.db, "api")
                self.client = SafeClient(limits, slots)
                self.owns_client = True
            return self.client

    def parse_pool(self) -> ParsePool:
        """The parse processes of this app (a stored robots.txt is matched there)."""
        if self.parser is None:
            from frontier.parse_pool import ParseLimits, ParsePool

            self.parser = ParsePool(ParseLimits.from_settings(self.settings))
        return self.parser

    def documents(self) -> DocumentReader:
        """The reader of the configured content sink (one per app, closed with it)."""
        if self.reader is None:
            from frontier.sinks.configured import open_reader

            self.reader = open_reader(self.settings, self.reads)
        return self.reader

    async def close(self) -> None:
        if self.probe is not None and self.probe is not self.reads:
            await self.probe.close()
        self.probe = None
        if self.reader is not None:
            await self.reader.close()
            self.reader = None
        if self.client is not None and self.owns_client:
            await self.client.close()
            self.client = None
        if self.parser is not None:
            await asyncio.to_thread(self.parser.close)
            self.parser = None


def context_of(request: Request) -> ApiContext:
    context: ApiContext = request.app.state.context
    return context
