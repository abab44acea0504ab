"""`POST /api/v1/reextract`: `frontier reextract` over the API (the fetcher's
`fetcher.reextract.run_reextract`, which the edge gives `create_app`): the archived
responses of the selected documents run through extraction again, no request made; a
document is rewritten only when its result changed. Token-gated like every write.

The answer comes when the run is done, so a large selection is the command line's job (or
narrow it: a source, a host, `since`). One run at a time per API process (409 while one
runs): each run starts its own extraction pool. It writes what a fetcher writes, so the
API's database role needs the fetcher's grants: with deploy/'s separate roles it is
refused (403) and `frontier reextract` runs as the fetcher's role."""

from __future__ import annotations

from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from frontier.api.auth import require_write
from frontier.api.context import context_of
from frontier.api.errors import ApiError, FieldInvalid
from frontier.api.json_body import read_model
from frontier.api.models import ErrorBody
from frontier.clock import utcnow
from frontier.documents import BadDocumentQuery, build_filter
from frontier.sources import UnknownSource

router = APIRouter(prefix="/api/v1", tags=["reextract"])

Text = Annotated[str | None, Field(default=None, strict=True, max_length=2000)]


class ReextractBody(BaseModel):
    """Which documents to re-extract: at least one of source, host, since, or all."""

    model_config = ConfigDict(extra="forbid")

    source: Text = Field(default=None, description="A source name or id.")
    host: Text = Field(default=None, description="A host, host:port or URL.")
    since: Text = Field(
        default=None, description="Fetched since: an ISO 8601 date or time, or an age (6h, 2d)."
    )
    all: bool = Field(default=False, strict=True, description="Every stored document.")
    dry_run: bool = Field(
        default=False, strict=True, description="Count what would change; write nothing."
    )


class ReextractResult(BaseModel):
    examined: int
    changed: int = Field(description="Rewritten (with dry_run: that would be).")
    unchanged: int
    duplicates: int = Field(description="Their new text is another URL's document: gone.")
    not_archived: int
    unreadable: int
    not_fetched: int
    failed: int = Field(description="Ended without a document: left as stored.")
    outcomes: dict[str, int]
    dry_run: bool


class ReextractRunning(ApiError):
    status, code = 409, "conflict"


class ReextractUnavailable(ApiError):
    """The app was built without a reextract function (`create_app(..., reextract=None)`)."""

    status, code = 501, "not_implemented"


class NotPermitted(ApiError):
    """The API's database role (deploy/: frontier_api) lacks the fetcher's write grants."""

    status, code = 403, "forbidden"


BODY_MODELS = (ReextractBody,)


@router.post(
    "/reextract",
    response_model=ReextractResult,
    responses={code: {"model": ErrorBody} for code in (400, 401, 403, 409, 413, 422, 501)},
    dependencies=[Depends(require_write)],
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/ReextractBody"}}
            },
        }
    },
)
async def reextract(request: Request) -> dict[str, Any]:
    """Run extraction again over the archived responses of the selected documents (no
    request is made); answers what changed, or with `dry_run` what would."""
    body = await read_model(request, ReextractBody)
    if not (body.all or body.source or body.host or body.since):
        raise FieldInvalid.of("all", "say which documents: source, host, since, or all: true")
    context = context_of(request)
    if context.reextract is None:
        raise ReextractUnavailable(
            "this server was started without the fetcher's extraction: it cannot re-extract"
        )
    if context.reextracting.locked():
        raise ReextractRunning("a re-extraction is running in this API process; try later")
    async with context.reextracting:
        try:
            where = await build_filter(
                context.db, source=body.source, host=body.host, since=body.since, now=utcnow()
            )
        except UnknownSource as exc:
            raise FieldInvalid.of("source", str(exc)) from None
        except BadDocumentQuery as exc:
            raise FieldInvalid.of("since" if body.since else "host", str(exc)) from None
        try:
            summary = await context.reextract(
                context.settings, context.db, where, dry_run=body.dry_run
            )
        except asyncpg.InsufficientPrivilegeError as exc:
            raise NotPermitted(
                f"this API's database role may not rewrite documents ({exc}); run "
                "`frontier reextract` with the fetcher's role"
            ) from None
    return summary.as_json()
