"""`POST /api/v1/urls/requeue` and `POST /api/v1/urls/purge`: operator actions on failed
and dead URLs (frontier.url_actions), the same filters as `frontier urls requeue|purge`.
The dashboard's requeue button posts here."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from frontier.api.auth import require_write
from frontier.api.context import context_of
from frontier.api.errors import FieldInvalid
from frontier.api.json_body import read_model
from frontier.api.models import ErrorBody
from frontier.clock import utcnow
from frontier.sources import UnknownSource
from frontier.url_actions import ActionResult, UrlActions, parse_filter

router = APIRouter(prefix="/api/v1/urls", tags=["urls"])

Text = Annotated[str | None, Field(default=None, strict=True, max_length=2000)]


class UrlActionBody(BaseModel):
    """Which failed and dead URLs to act on (every field optional: none means all of
    them), and whether only to count them."""

    model_config = ConfigDict(extra="forbid")

    status: Text = Field(
        default=None,
        description="failed or dead (default: both); requeue also takes fetched, to fetch "
        "those URLs again.",
    )
    reason: Text = Field(default=None, description="A dead reason: only dead URLs with it.")
    host: Text = Field(default=None, description="A host, host:port or URL.")
    source: Text = Field(default=None, description="A source name.")
    url: Text = Field(default=None, description="One URL (any spelling).")
    older_than: Text = Field(
        default=None, description="Last changed longer ago than this: 90s, 30m, 6h, 2d, 1w."
    )
    dry_run: bool = Field(default=False, strict=True, description="Count and list a sample.")


class UrlActionSample(BaseModel):
    url: str
    status: str
    dead_reason: str | None
    last_error: str | None
    updated_at: str


class UrlActionResult(BaseModel):
    action: str
    dry_run: bool
    matched: int = Field(description="URLs the filter selected.")
    requeued: int | None = Field(default=None, description="URLs made pending (requeue).")
    purged: int | None = Field(default=None, description="URLs deleted (purge).")
    sample: list[UrlActionSample] = Field(description="The first 20 URLs selected.")


BODY_MODELS = (UrlActionBody,)
_DOC: dict[str, Any] = {
    "requestBody": {
        "required": False,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UrlActionBody"}}},
    }
}
_ROUTE: dict[str, Any] = {
    "response_model": UrlActionResult,
    "response_model_exclude_none": True,
    "responses": {code: {"model": ErrorBody} for code in (400, 401, 403, 413, 422)},
    "dependencies": [Depends(require_write)],
    "openapi_extra": _DOC,
}


@router.post("/requeue", **_ROUTE)
async def requeue(request: Request) -> dict[str, Any]:
    """Make the matching failed and dead URLs pending and due now, their retries, dead
    reason and last error reset; `"status": "fetched"` fetches fetched URLs again.
    Answers how many matched and were requeued, and a sample; with `dry_run`, changes
    nothing."""
    return (await _act(request, "requeue")).as_json()


@router.post("/purge", **_ROUTE)
async def purge(request: Request) -> dict[str, Any]:
    """Delete the matching failed and dead URLs from the frontier (their documents stay).
    Answers how many matched and were purged, and a sample; with `dry_run`, changes
    nothing."""
    return (await _act(request, "purge")).as_json()


async def _act(request: Request, action: str) -> ActionResult:
    body = await read_model(request, UrlActionBody) if await request.body() else UrlActionBody()
    wanted = parse_filter(
        status=body.status,
        reason=body.reason,
        host=body.host,
        source=body.source,
        older_than=body.older_than,
        url=body.url,
        now=utcnow(),
        action=action,
    )
    actions = UrlActions(context_of(request).db)
    try:
        if action == "requeue":
            return await actions.requeue(wanted, dry_run=body.dry_run)
        return await actions.purge(wanted, dry_run=body.dry_run)
    except UnknownSource as exc:
        raise FieldInvalid.of("source", str(exc)) from None
