"""Read-only views: `/healthz`, `/api/v1/stats`, `/api/v1/frontier`, `/api/v1/fetch-log`
and `/metrics`. Each reads maintained counters or one index range, never a full count."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Depends, Query, Request, Response

from frontier.api.auth import Credentials, has_token, require_read
from frontier.api.context import HEALTH_TIMEOUT_S, context_of
from frontier.api.errors import FieldInvalid, error_response
from frontier.api.models import ErrorBody, FetchLogPage, FrontierPage, Health, Stats
from frontier.api.queries import ApiQueries, FrontierFilter
from frontier.api.read_gate import expensive_read
from frontier.errors import DatabaseUnavailable, StatementTimedOut
from frontier.fetch_log import FetchLogRepository
from frontier.states import FetchKind, UrlStatus
from frontier.stats import StatsRepository
from frontier.urls import InvalidURL, host_key

router = APIRouter()
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (401, 422, 429, 503)
}
HASH_PATTERN = r"^[0-9a-f]{64}$"


@router.get("/healthz", response_model=Health, tags=["views"])
async def healthz(request: Request, credentials: Credentials) -> Any:
    """Liveness and database reachability (never needs a token), on a connection of its
    own: it never waits behind the pool's work. During an outage an anonymous caller is
    told only "database unavailable"; one with a token learns where and why (a session
    cannot be checked while the database is away)."""
    context = context_of(request)
    try:
        probe = await context.health_db()
        await probe.fetchval("SELECT 1")  # the seam's own probe, no table read
    except DatabaseUnavailable as exc:
        context.db.outage.report(exc, None)
        told = str(exc) if has_token(request, credentials) else "database unavailable"
        return error_response(503, "unavailable", told, headers={"Retry-After": "5"})
    except StatementTimedOut:
        told = f"database did not answer within {HEALTH_TIMEOUT_S:g} s"
        return error_response(503, "unavailable", told, headers={"Retry-After": "5"})
    return {"status": "ok", "database": "ok"}


@router.get(
    "/api/v1/stats",
    response_model=Stats,
    responses=_ERRORS,
    tags=["views"],
    dependencies=[Depends(require_read), Depends(expensive_read)],
)
async def stats(request: Request) -> dict[str, Any]:
    """Totals by status, origin, source and host; due now; throughput over the last hour."""
    repository = StatsRepository(context_of(request).reads)
    out = (await repository.stats()).as_json()
    out["throughput_last_hour"] = await repository.throughput()
    out["top_error_hosts"] = [
        {**row, "backoff_until": row["backoff_until"].isoformat() if row["backoff_until"] else None}
        for row in await repository.top_error_hosts()
    ]
    return out


def _host(value: str) -> str:
    """A host as the frontier stores it (lowercase, IDNA), from a host or a URL."""
    try:
        return host_key(value)
    except InvalidURL as exc:
        raise FieldInvalid.of("host", exc.reason) from None


@router.get(
    "/api/v1/frontier",
    response_model=FrontierPage,
    responses=_ERRORS,
    tags=["views"],
    dependencies=[Depends(require_read), Depends(expensive_read)],
)
async def frontier_rows(
    request: Request,
    status: Annotated[UrlStatus | None, Query(description="Only URLs in this status.")] = None,
    host: Annotated[str | None, Query(max_length=300, description="Only this host.")] = None,
    source: Annotated[str | None, Query(max_length=200, description="Source name or id.")] = None,
    after: Annotated[
        str | None, Query(pattern=HASH_PATTERN, description="`next` of the previous page.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    """Frontier rows in url_hash order, keyset-paged: follow `next` until it is null."""
    db = context_of(request).reads
    source_id: UUID | None = None
    if source is not None:
        from frontier.sources import SourceRepository, UnknownSource

        try:
            source_id = await SourceRepository(db).id_of(source)
        except UnknownSource:
            raise FieldInvalid.of("source", f"no source named {source!r}") from None
    where = FrontierFilter(
        status=str(status) if status else None,
        host=_host(host) if host else None,
        source_id=source_id,
    )
    page = await ApiQueries(db).frontier_page(where, after=after, limit=limit)
    return {"items": page.items, "next": page.next, "scanned": page.scanned}


@router.get(
    "/api/v1/fetch-log",
    response_model=FetchLogPage,
    responses=_ERRORS,
    tags=["views"],
    dependencies=[Depends(require_read)],
)
async def fetch_log(
    request: Request,
    kind: Annotated[FetchKind | None, Query()] = None,
    source_id: Annotated[UUID | None, Query()] = None,
    before_id: Annotated[
        int | None, Query(ge=1, le=2**63 - 1, description="Rows older than this id.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
) -> dict[str, Any]:
    """Poll and fetch attempts, newest first, keyset-paged by id."""
    rows = await FetchLogRepository(context_of(request).reads).recent(
        limit, before_id=before_id, kind=kind, source_id=source_id
    )
    return {"items": rows, "next_before_id": rows[-1]["id"] if len(rows) == limit else None}


@router.get(
    "/metrics",
    response_class=Response,
    tags=["views"],
    dependencies=[Depends(require_read)],
    responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text format"}},
)
async def metrics(request: Request) -> Response:
    """Prometheus metrics: claims, fetches and polls by outcome, URLs submitted by origin,
    queue depth by status, sink errors."""
    from prometheus_client import CONTENT_TYPE_LATEST

    context = context_of(request)
    body = await context.collector.scrape(context.reads)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
