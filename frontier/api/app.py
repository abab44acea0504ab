"""The FastAPI app factory: `create_app(settings, db, fire=...)` wires the routers, the
error handlers and a per-app Prometheus registry around a `Database` the caller owns, with
the manual fire the caller gives it (the edge passes `poller.service.fire`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from frontier.api.context import ApiContext, FireSource
from frontier.api.errors import install_error_handlers
from frontier.api.metrics import DatabaseCollector
from frontier.api.routes import dashboard, imports, sources, views
from frontier.db import Database
from frontier.safe_http import SafeClient
from frontier.settings import Settings

DESCRIPTION = """The frontier's HTTP API. Write endpoints need
`Authorization: Bearer <FRONTIER_API_TOKEN>`; reads need it too when
FRONTIER_API_READ_AUTH is on. Every error answers
`{"error": {"code": ..., "message": ..., "fields": [{"field": ..., "message": ...}]}}`."""


def create_app(
    settings: Settings,
    db: Database,
    *,
    fire: FireSource | None = None,
    client: SafeClient | None = None,
) -> FastAPI:
    """The API over `db`. `fire` polls one source now (`POST /api/v1/sources/{id}/fire`);
    without it that endpoint answers 501. `client` (optional) is the safe HTTP client for
    manual fires; without one, the app makes its own on first use and closes it on
    shutdown."""
    context = ApiContext(
        settings=settings, db=db, collector=DatabaseCollector(), fire=fire, client=client
    )

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await context.close()

    app = FastAPI(
        title="frontier", version="1", description=DESCRIPTION, lifespan=lifespan,
        docs_url="/docs", redoc_url=None,
    )  # fmt: skip
    app.state.context = context
    install_error_handlers(app)
    for module in (views, sources, imports, dashboard):
        app.include_router(module.router)
    return app
