"""The FastAPI app factory: `create_app(settings, db, fire=..., reextract=...)` wires the
routers, the error handlers and a per-app Prometheus registry around a `Database` the
caller owns, with the service functions the caller gives it (the edge, `frontier_cli`,
passes `poller.service.fire` and `fetcher.reextract.run_reextract`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI
from fastapi.openapi.utils import get_openapi

from frontier.api.auth import LoginRequired
from frontier.api.body_limit import BodyLimit, Cap
from frontier.api.context import ApiContext, FireSource, Reextract
from frontier.api.errors import Unhandled, install_error_handlers
from frontier.api.metrics import DatabaseCollector
from frontier.api.query_guard import refuse_nul
from frontier.api.routes import (
    actions,
    content,
    dashboard,
    docs,
    imports,
    login,
    pages,
    sources,
    url_actions,
    views,
    websub,
)
from frontier.api.routes import export as export_route
from frontier.api.routes import reextract as reextract_route  # `reextract`: the parameter
from frontier.api.security_headers import SecurityHeaders
from frontier.db import Database
from frontier.safe_http.client import SafeClient
from frontier.settings import Settings
from frontier.websub import CALLBACK_PREFIX

DESCRIPTION = """The frontier's HTTP API. Write endpoints need
`Authorization: Bearer <FRONTIER_API_TOKEN>`; reads need it too when
FRONTIER_API_READ_AUTH is on. Every error answers
`{"error": {"code": ..., "message": ..., "fields": [{"field": ..., "message": ...}]}}`."""


def create_app(
    settings: Settings,
    db: Database,
    *,
    fire: FireSource | None = None,
    reextract: Reextract | None = None,
    client: SafeClient | None = None,
) -> FastAPI:
    """The API over `db`. `fire` polls one source now (`POST /api/v1/sources/{id}/fire`),
    `reextract` runs extraction again (`POST /api/v1/reextract`); without one, its endpoint
    answers 501. `client` (optional) is the safe HTTP client for manual fires; without one,
    the app makes its own on first use and closes it on shutdown."""
    context = ApiContext(
        settings=settings,
        db=db,
        collector=DatabaseCollector(),
        fire=fire,
        reextract=reextract,
        client=client,
    )

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await context.close()

    app = FastAPI(
        title="frontier",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        dependencies=[Depends(refuse_nul)],
    )
    app.state.context = context
    install_error_handlers(app)
    app.add_exception_handler(LoginRequired, login.login_redirect)
    for module in (
        views,
        sources,
        imports,
        url_actions,
        reextract_route,
        dashboard,
        docs,
        content,
        export_route,
        pages,
        login,
        actions,
        websub,
    ):
        app.include_router(module.router)
    app.mount("/docs/assets", docs.ASSETS, name="docs-assets")
    app.mount("/static", docs.STATIC, name="static")
    app.add_middleware(Unhandled)  # innermost: a 500 still gets the headers below
    app.add_middleware(BodyLimit, cap_for=body_caps(settings))
    app.add_middleware(SecurityHeaders)  # outermost: every answer gets the headers
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def body_caps(settings: Settings) -> Any:
    """The size cap of each path's request body: the import's, a WebSub notification's,
    or the JSON one."""
    import_cap = Cap(settings.api_import_max_bytes, "FRONTIER_API_IMPORT_MAX_BYTES")
    websub_cap = Cap(settings.websub_max_bytes, "FRONTIER_WEBSUB_MAX_BYTES")
    json_cap = Cap(settings.api_json_max_bytes, "FRONTIER_API_JSON_MAX_BYTES")

    def cap_for(path: str) -> Cap:
        if path == imports.PATH:
            return import_cap
        return websub_cap if path.startswith(CALLBACK_PREFIX + "/") else json_cap

    return cap_for


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema, plus the models of the bodies routes read themselves (they are
    not parameters, so that the token is checked before the body is read)."""
    if app.openapi_schema is None:
        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in (*sources.BODY_MODELS, *url_actions.BODY_MODELS, *reextract_route.BODY_MODELS):
            found = model.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(found.pop("$defs", {}))
            components[model.__name__] = found
        app.openapi_schema = schema
    return app.openapi_schema
