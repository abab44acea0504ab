"""`frontier serve`: open the database, build the app (with the service functions the edge
gives it) and run it under uvicorn. `uvicorn_config` is the one uvicorn configuration,
shared with `frontier up`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Iterator
from typing import Any

import uvicorn
from fastapi import FastAPI

from frontier import event_loop
from frontier.api.app import create_app
from frontier.api.context import FireSource, Reextract
from frontier.api.header_deadline import protocol_with_header_deadline
from frontier.connect import open_database
from frontier.safe_http.limits import raise_open_file_limit
from frontier.settings import Settings

log = logging.getLogger(__name__)
LISTEN_BACKLOG = 4096  # pending connections the kernel queues before accept (both entry points)


class _StoppableServer(uvicorn.Server):
    """uvicorn re-raises a caught SIGTERM/SIGINT once it has shut down, which kills the
    process before the pool is closed and an embedded PostgreSQL stopped (exit 143). This
    one shuts down gracefully on those signals and then returns, so `frontier serve` exits 0.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, self.handle_exit, signum, None)
        try:
            yield
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)


def uvicorn_config(app: FastAPI, settings: Settings, **where: Any) -> uvicorn.Config:
    """How both `frontier serve` and `frontier up` run the API (`where`: host and port, or
    nothing when the caller passes its own socket): a deadline for request headers, no
    access log, uvicorn's own lines through the process's log handler (text or JSON),
    no Server header, X-Forwarded-Proto and -For believed from FRONTIER_API_TRUSTED_PROXIES
    only. Lifts the process's soft open-file limit to its hard one,
    so that thousands of idle connections do not exhaust the descriptors first."""
    raise_open_file_limit()
    return uvicorn.Config(
        app,
        **where,
        http=protocol_with_header_deadline(settings.api_header_timeout_s),
        log_level="warning",
        log_config=None,  # uvicorn's lines go to the root handler: FRONTIER_LOG_FORMAT
        access_log=False,
        lifespan="on",
        server_header=False,
        backlog=LISTEN_BACKLOG,
        proxy_headers=True,
        forwarded_allow_ips=settings.api_trusted_proxies,
    )


async def serve(
    settings: Settings,
    dsn: str,
    host: str,
    port: int,
    *,
    fire: FireSource | None,
    reextract: Reextract | None,
) -> None:
    async with open_database(dsn, settings) as db:
        app = create_app(settings, db, fire=fire, reextract=reextract)
        server = _StoppableServer(uvicorn_config(app, settings, host=host, port=port))
        if not settings.api_token:
            log.warning("FRONTIER_API_TOKEN is not set: the API refuses every write")
        await server.serve()


def run(
    settings: Settings,
    dsn: str,
    host: str,
    port: int,
    *,
    fire: FireSource | None,
    reextract: Reextract | None,
) -> None:
    event_loop.run(serve(settings, dsn, host, port, fire=fire, reextract=reextract))
