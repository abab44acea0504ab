"""The dashboard's actions, behind the write token: fire a source now, disable or enable
it. Each is an HTML form posted with the session cookie (made with FRONTIER_API_TOKEN at
`/login`) and the session's CSRF token; the answer is a redirect back to the page the
form was on, with a one-line notice of what happened (`?notice=`, signed in `&sig=`: the
dashboard shows only notices the server signed).

They do what the JSON API does (`POST /api/v1/sources/{id}/fire`, `PATCH
/api/v1/sources/{id}`), through the same repository and the same fire function."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse

from frontier.api import sessions
from frontier.api.auth import session_for_write
from frontier.api.context import context_of
from frontier.api.routes.login import read_form, safe_next
from frontier.errors import RetryLater
from frontier.source_schema import SourcePatch
from frontier.sources import SourceRepository

router = APIRouter(prefix="/actions", tags=["dashboard"], include_in_schema=False)


def _back(request: Request, form: dict[str, str], notice: str) -> RedirectResponse:
    target = safe_next(form.get("next"))
    joiner = "&" if "?" in target else "?"
    token = context_of(request).settings.api_token
    assert token is not None  # an action's session was made with it
    signature = sessions.sign_notice(notice, token)
    return RedirectResponse(
        f"{target}{joiner}notice={quote(notice, safe='')}&sig={signature}", status_code=303
    )


@router.post("/sources/{name}/fire")
async def fire(request: Request, name: str) -> RedirectResponse:
    form = await read_form(request)
    await session_for_write(request, form.get("csrf"))
    context = context_of(request)
    source = await SourceRepository(context.db).get(name)  # 404 for an unknown name
    if context.fire is None:
        return _back(
            request, form, "this server was started without the poller: it cannot fire sources"
        )
    try:
        result = await context.fire(
            context.settings,
            context.db,
            source.id,
            dry_run=False,
            client=await context.http_client(),
        )
    except RetryLater as exc:
        return _back(request, form, f"{name}: not fired: {exc}")
    answer = result.as_json()
    error = f", error: {answer['error']}" if answer.get("error") else ""
    return _back(
        request,
        form,
        f"{name}: fired: {answer['outcome']}, seen {answer['items_seen']}, "
        f"new {answer['items_new']}{error}",
    )


@router.post("/sources/{name}/{change}")
async def enable_or_disable(request: Request, name: str, change: str) -> RedirectResponse:
    form = await read_form(request)
    await session_for_write(request, form.get("csrf"))
    if change not in ("enable", "disable"):
        return _back(request, form, f"unknown action {change!r}: enable, disable or fire")
    repository = SourceRepository(context_of(request).db)
    source = await repository.get(name)
    patch = SourcePatch.model_validate({"enabled": change == "enable"})
    await repository.update(source.id, patch)
    return _back(request, form, f"{name}: {change}d")
