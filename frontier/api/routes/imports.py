"""`POST /api/v1/import`: bulk URL import, streamed (see `frontier.api.import_stream`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from frontier.api.auth import require_write
from frontier.api.context import context_of
from frontier.api.errors import ApiError, FieldInvalid, RequestTooLarge, UnsupportedMediaType
from frontier.api.import_stream import (
    JSON_TYPES,
    NDJSON_TYPES,
    TEXT_TYPES,
    JsonBody,
    LimitedBody,
    text_batches,
)
from frontier.api.models import ErrorBody, ImportResult
from frontier.imports import ImportFormat, ImportSummary, Line, submit_lines
from frontier.queue import QueueRepository
from frontier.queue_values import QueuePolicy, SourceRef
from frontier.sources import MANUAL, SourceRepository, UnknownSource

router = APIRouter(tags=["import"])
PATH = "/api/v1/import"

_BODY_DOC: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "description": 'JSON `{"source": NAME, "urls": [...]}` (keys in any order; the '
        "whole body is checked before anything is imported), NDJSON (application/x-ndjson: "
        'one {"url": ...} or JSON string per line) or plain text (one URL per line). '
        "Streamed: any size up to FRONTIER_API_IMPORT_MAX_BYTES.",
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "required": ["urls"],
                    "properties": {
                        "source": {"type": "string"},
                        "urls": {"type": "array", "items": {"type": "string"}},
                    },
                }
            },
            "text/plain": {"schema": {"type": "string"}},
        },
    }
}


@router.post(
    PATH,
    response_model=ImportResult,
    response_model_exclude_none=True,
    responses={code: {"model": ErrorBody} for code in (400, 401, 403, 413, 415, 422)},
    dependencies=[Depends(require_write)],
    openapi_extra=_BODY_DOC,
)
async def import_urls(
    request: Request,
    source: Annotated[
        str | None, Query(max_length=200, description="Source name (default: manual).")
    ] = None,
    requeue: Annotated[
        bool,
        Query(
            description="Also requeue the listed URLs that are failed or dead (without it, "
            "they answer duplicate and stay as they are)."
        ),
    ] = False,
) -> dict[str, Any]:
    """Import URLs with origin `manual`; answers per-line verdicts. Batches already sent
    stay imported if the body later turns out bad (the error message counts them)."""
    context = context_of(request)
    limit = context.settings.api_import_max_bytes
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > limit:
        raise RequestTooLarge(
            f"request body of {length} bytes is over {limit} bytes (FRONTIER_API_IMPORT_MAX_BYTES)"
        )
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    body = LimitedBody(request.stream(), limit)
    json_body: JsonBody | None = None
    batches: AsyncIterator[list[Line]]
    if media in JSON_TYPES:
        json_body = JsonBody(body)
        await json_body.check()  # all of it, before anything is written
        batches = json_body.batches()
    elif media in NDJSON_TYPES:
        batches = text_batches(body, ImportFormat.NDJSON)
    elif media in TEXT_TYPES or media.startswith("text/"):
        batches = text_batches(body, ImportFormat.TXT)
    else:
        raise UnsupportedMediaType(
            f"Content-Type {media!r} is not imported: use application/json, "
            "application/x-ndjson or text/plain"
        )
    sources = SourceRepository(context.db)

    async def resolve() -> SourceRef:
        name = source or MANUAL
        if json_body is not None and json_body.source is not None:
            if source is not None and json_body.source != source:
                raise FieldInvalid.of("source", "the query and the body name different sources")
            name = json_body.source
        try:
            found = await sources.get(name)
        except UnknownSource:
            raise FieldInvalid.of("source", f"no source named {name!r}") from None
        return found.ref

    queue = QueueRepository(context.db, QueuePolicy.from_settings(context.settings))
    summary = ImportSummary(requeue=requeue)
    try:
        await submit_lines(queue, batches, resolve, summary, requeue=requeue)
    except ApiError as exc:
        if summary.accepted or summary.duplicate or summary.rejected:
            exc.message += (
                f" (already imported before the error: accepted "
                f"{summary.accepted}, duplicate {summary.duplicate}, "
                f"rejected {summary.rejected})"
            )
        raise
    return summary.as_json()
