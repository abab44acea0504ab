"""What was stored and one URL's story: `GET /api/v1/documents` (keyset-paged, the
filters of `frontier documents`), `GET /api/v1/documents/{hash or URL}` and
`GET /api/v1/urls/{hash or URL}` (the story `frontier url show` prints); a document's
versions (`.../versions`) and the diff between two (`.../diff?old=&new=`). A URL in the path
is percent-encoded (its `?` as `%3F`); any spelling of it names the same URL."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, Field

from frontier.api.auth import require_read
from frontier.api.context import context_of
from frontier.api.errors import ApiError
from frontier.api.models import ErrorBody
from frontier.api.read_gate import expensive_read
from frontier.clock import utcnow
from frontier.documents import SEARCH_MAX_CHARS, Cursor, build_filter
from frontier.robots import stored_rules_check
from frontier.url_story import UrlStoryRepository, hash_of
from frontier.versions import DocumentVersions, UnknownVersion

router = APIRouter(tags=["content"], dependencies=[Depends(require_read)])
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (401, 404, 422, 429, 503)
}


# The filters `GET /api/v1/documents` and `GET /api/v1/export` share.
SourceParam = Annotated[str | None, Query(max_length=200, description="Source name or id.")]
HostParam = Annotated[str | None, Query(max_length=300, description="A host or URL.")]
SinceParam = Annotated[
    str | None, Query(max_length=64, description="ISO 8601 date or time, or an age: 30m, 6h, 2d.")
]
DistinctParam = Annotated[
    Literal["cluster"] | None,
    Query(description="`cluster`: one document per near-duplicate cluster (its earliest)."),
]


class NotFound(ApiError):
    status, code = 404, "not_found"


class DocumentPageModel(BaseModel):
    items: list[dict[str, Any]] = Field(
        description="Documents without their body, newest first (fetched_at, url_hash)."
    )
    next: str | None = Field(description="Pass as `after` for the next page; null at the end.")


@router.get(
    "/api/v1/documents",
    response_model=DocumentPageModel,
    responses=_ERRORS,
    dependencies=[Depends(expensive_read)],
)
async def documents(
    request: Request,
    source: SourceParam = None,
    host: HostParam = None,
    since: SinceParam = None,
    search: Annotated[
        str | None,
        Query(max_length=SEARCH_MAX_CHARS, description="Words all in the title or body."),
    ] = None,
    after: Annotated[
        str | None, Query(max_length=100, description="`next` of the previous page.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    distinct: DistinctParam = None,
) -> dict[str, Any]:
    """Stored documents from the configured sink, newest first, keyset-paged. An
    expensive read: at most FRONTIER_API_READS_PER_CLIENT at once per client (429), each
    statement within FRONTIER_API_READ_TIMEOUT_S (503 query_too_expensive); a search too
    broad to answer within its row budget is refused (422, `search: ... narrow it`)."""
    context = context_of(request)
    cursor = Cursor.decode(after) if after is not None else None
    where = await build_filter(
        context.reads,
        source=source,
        host=host,
        since=since,
        search=search,
        distinct=distinct,
        now=utcnow(),
    )
    page = await context.documents().page(where, after=cursor, limit=limit)
    return {"items": page.items, "next": page.next}


@router.get("/api/v1/documents/{key:path}/versions", responses=_ERRORS)
async def document_versions(request: Request, key: str) -> dict[str, Any]:
    """The versions of one document, oldest first, without their text: the earlier ones
    kept (a revisit or re-extraction whose text changed keeps the one it replaced, at most
    FRONTIER_DOCUMENT_VERSIONS), then the current document (`current`: true)."""
    context = context_of(request)
    digest = hash_of(key)
    current = await context.documents().get(digest)
    kept = DocumentVersions(context.reads, context.settings.document_versions)
    versions = await kept.history(digest, current)
    if not versions:
        raise NotFound(f"no document stored for {key[:300]!r}")
    return {"url_hash": digest, "versions": versions}


@router.get("/api/v1/documents/{key:path}/diff", responses=_ERRORS)
async def document_diff(
    request: Request,
    key: str,
    old: Annotated[int, Query(ge=1, description="The earlier version's number.")],
    new: Annotated[int, Query(ge=1, description="The later version's number.")],
) -> dict[str, Any]:
    """A unified diff (difflib) of the texts of two versions of one document."""
    context = context_of(request)
    digest = hash_of(key)
    current = await context.documents().get(digest)
    kept = DocumentVersions(context.reads, context.settings.document_versions)
    try:
        diff = await kept.diff(digest, old, new, current)
    except UnknownVersion as exc:
        raise NotFound(str(exc)) from None
    return {"url_hash": digest, "old": old, "new": new, "diff": diff}


@router.get("/api/v1/documents/{key:path}", responses=_ERRORS)
async def document(request: Request, key: str) -> dict[str, Any]:
    """One document, body included, by its url_hash or its URL."""
    found = await context_of(request).documents().get(hash_of(key))
    if found is None:
        raise NotFound(f"no document stored for {key[:300]!r}")
    return found


@router.get("/api/v1/urls/{key:path}", responses=_ERRORS)
async def url_story(request: Request, key: str) -> dict[str, Any]:
    """One URL's story: identity (`url`, `url_hash`), request spelling (`fetch_url`), its
    frontier row, its host's state, its fetch-log rows, its document, and `why` it is not
    being fetched now (`cause`, `sentence`, `until`). 404 when it is not in the frontier."""
    context = context_of(request)
    story = await UrlStoryRepository(context.reads).story(
        key,
        documents=context.documents(),
        robots_allows=stored_rules_check(context.settings.user_agent, context.parse_pool()),
        key_mode=context.settings.politeness_key,
    )
    if story.row is None:
        raise NotFound(f"{key[:300]!r} is not in the frontier")
    return story.as_json()
