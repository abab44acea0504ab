"""`/api/v1/sources`: list, read, create, update, delete, and the manual fire."""

from __future__ import annotations

import math
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import BaseModel

from frontier.api.auth import require_read, require_write
from frontier.api.context import context_of
from frontier.api.errors import ApiError, FieldInvalid, RateLimited
from frontier.api.json_body import read_model
from frontier.api.models import ErrorBody, SourceOut
from frontier.errors import RetryLater
from frontier.source_schema import SourceConfig, SourcePatch
from frontier.sources import Source, SourceRepository

router = APIRouter(prefix="/api/v1/sources", tags=["sources"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 413, 422)
}


async def _shown(repository: SourceRepository, sources: list[Source]) -> list[dict[str, Any]]:
    """Sources as SourceOut: each row with the options it sets outside `sources` and the
    poller's last error on it."""
    ids = [s.id for s in sources]
    options, errors = await repository.options(ids), await repository.poll_errors(ids)
    return [
        {
            **{name: getattr(s, name) for name in Source.__slots__},
            **options.get(s.id, {}),
            "last_error": errors.get(s.id),
        }
        for s in sources
    ]


@router.get("", response_model=list[SourceOut], dependencies=[Depends(require_read)])
async def list_sources(request: Request) -> list[dict[str, Any]]:
    repository = SourceRepository(context_of(request).reads)
    return await _shown(repository, await repository.list())


@router.get(
    "/{source_id}",
    response_model=SourceOut,
    responses=_ERRORS,
    dependencies=[Depends(require_read)],
)
async def get_source(request: Request, source_id: UUID) -> dict[str, Any]:
    repository = SourceRepository(context_of(request).reads)
    return (await _shown(repository, [await repository.get_by_id(source_id)]))[0]


def _json_body(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI request body of a route that reads its JSON itself (`read_model`), so
    that the token is checked before the body is read; `frontier.api.app` adds the model's
    schema to the components."""
    schema = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


BODY_MODELS = (SourceConfig, SourcePatch)  # schemas the routes below refer to


@router.post(
    "",
    response_model=SourceOut,
    status_code=201,
    responses=_ERRORS,
    dependencies=[Depends(require_write)],
    openapi_extra=_json_body(SourceConfig),
)
async def create_source(request: Request) -> dict[str, Any]:
    body = await read_model(request, SourceConfig)
    repository = SourceRepository(context_of(request).db)
    return (await _shown(repository, [await repository.create(body)]))[0]


@router.patch(
    "/{source_id}",
    response_model=SourceOut,
    responses=_ERRORS,
    dependencies=[Depends(require_write)],
    openapi_extra=_json_body(SourcePatch),
)
async def update_source(request: Request, source_id: UUID) -> dict[str, Any]:
    body = await read_model(request, SourcePatch)
    repository = SourceRepository(context_of(request).db)
    return (await _shown(repository, [await repository.update(source_id, body)]))[0]


@router.delete(
    "/{source_id}", status_code=204, responses=_ERRORS, dependencies=[Depends(require_write)]
)
async def delete_source(request: Request, source_id: UUID) -> Response:
    await SourceRepository(context_of(request).db).delete_by_id(source_id)
    return Response(status_code=204)


class FireUnavailable(ApiError):
    """The app was built without a fire function (`create_app(..., fire=None)`)."""

    status, code = 501, "not_implemented"


@router.post(
    "/{source_id}/fire",
    responses={
        **_ERRORS,
        429: {"model": ErrorBody, "description": "Retry-After says when"},
        501: {"model": ErrorBody, "description": "this server cannot fire sources"},
    },
    dependencies=[Depends(require_write)],
)
async def fire_source(
    request: Request,
    source_id: UUID,
    dry_run: Annotated[bool, Query(description="Only report what it would submit.")] = False,
) -> dict[str, Any]:
    """Poll one source now (feed and sitemap), rate-limited per source in the database."""
    context = context_of(request)
    if context.fire is None:
        raise FireUnavailable("this server was started without the poller: it cannot fire sources")
    source = await SourceRepository(context.db).get_by_id(source_id)  # 404 before any request
    if not (source.feed_url or source.base_url or source.sitemap_url):
        raise FieldInvalid.of(
            "source_id",
            f"source {source.name!r} has nothing to poll: "
            "set its feed_url, base_url or sitemap_url",
        )
    try:
        result = await context.fire(
            context.settings,
            context.db,
            source_id,
            dry_run=dry_run,
            client=await context.http_client(),
        )
    except RetryLater as exc:  # the poller's FireRateLimited (and SourceBusy, a poll holds it)
        wait = max(1, math.ceil(exc.retry_after_s))
        raise RateLimited(str(exc), headers={"Retry-After": str(wait)}) from None
    answer: dict[str, Any] = result.as_json()
    return answer
