"""`GET /api/v1/export`: the stored documents, oldest first, as a streamed NDJSON response
(frontier.export; the filters of `frontier export`), behind the read token.

The documents are read by the configured sink's reader (`export`): PostgreSQL a page a
statement on the bounded read pool (FRONTIER_API_READ_TIMEOUT_S a statement, not the
export's length), or the Elasticsearch / OpenSearch index. Each page's rows are encoded to
JSON in a worker thread so the event loop serves other requests meanwhile, and sent before
more is read than the next page, so memory is a page or two whatever the count. The
export holds one of its client's expensive-read slots (frontier.api.read_gate) until the
stream ends, taken and given back by the stream itself. An export that fails mid-stream
(the database gone) ends the response early: its last line is then a JSON object
{"error": ...} instead of a document."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from frontier.api.auth import require_read
from frontier.api.context import context_of
from frontier.api.models import ErrorBody
from frontier.api.read_gate import ReadGate, client_of
from frontier.api.routes.content import DistinctParam, HostParam, SinceParam, SourceParam
from frontier.clock import utcnow
from frontier.documents import DocumentReader, ExportQuery, build_filter
from frontier.export import LANGUAGE_MAX_CHARS, check_language, ndjson

log = logging.getLogger(__name__)
router = APIRouter(tags=["content"], dependencies=[Depends(require_read)])
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (401, 422, 429, 503)
}


@router.get(
    "/api/v1/export",
    responses={
        **_ERRORS,
        200: {"content": {"application/x-ndjson": {}}, "description": "A document a line."},
    },
    response_class=StreamingResponse,
)
async def export(
    request: Request,
    source: SourceParam = None,
    host: HostParam = None,
    since: SinceParam = None,
    language: Annotated[
        str | None,
        Query(
            max_length=LANGUAGE_MAX_CHARS + 8,
            description="A language code (the detected one, else the declared): en, pt-BR.",
        ),
    ] = None,
    distinct: DistinctParam = None,
    with_body: Annotated[
        bool, Query(description="Include the article's text (body, paragraphs, markdown).")
    ] = False,
) -> StreamingResponse:
    """Every stored document matching the filters, oldest first, one JSON object a line
    (`application/x-ndjson`), the fields of `frontier export --format jsonl`, from the
    configured sink (PostgreSQL, Elasticsearch or OpenSearch)."""
    context = context_of(request)
    where = await build_filter(
        context.reads, source=source, host=host, since=since, distinct=distinct, now=utcnow()
    )
    query = ExportQuery(
        where,
        until=utcnow(),
        language=check_language(language) if language is not None else None,
        with_body=with_body,
    )
    slot = _Slot(context.read_gate, client_of(request))  # 429 now, when over a limit
    return StreamingResponse(
        _lines(context.documents(), query, slot),
        media_type="application/x-ndjson",
        background=BackgroundTask(slot.leave),  # also when the stream never started
    )


class _Slot:
    """One expensive-read slot of a client, given back once (by the stream's end or the
    response's background task, whichever comes first)."""

    def __init__(self, gate: ReadGate, client: str) -> None:
        gate.enter(client)
        self.gate, self.client, self.held = gate, client, True

    def leave(self) -> None:
        if self.held:
            self.held = False
            self.gate.leave(self.client)


async def _lines(reader: DocumentReader, query: ExportQuery, slot: _Slot) -> AsyncIterator[bytes]:
    try:
        async for page in reader.export(query):
            yield await asyncio.to_thread(ndjson, page)
    except Exception as exc:  # the status is sent: say it in the stream, then end it
        log.warning("export to %s ended early: %s", slot.client, exc)
        yield (json.dumps({"error": f"export ended early: {exc}"}) + "\n").encode()
    finally:
        slot.leave()
