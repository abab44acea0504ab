"""The dashboard's login: `GET /login` shows a form that takes the read or the write
token, `POST /login` checks it and sets the session cookie (frontier.api.sessions),
`POST /logout` ends it, on the server too (frontier.api.session_store: the same cookie,
replayed, no longer acts). A browser sent here by `LoginRequired` comes back to the page it
asked for (`next`, a path on this server only).

The cookie is HttpOnly, SameSite=Strict, Secure when the request came over https (as a
trusted proxy says: FRONTIER_API_TRUSTED_PROXIES) or always with FRONTIER_API_SECURE_COOKIES,
and expires with the session (FRONTIER_API_SESSION_HOURS). Wrong tokens are throttled per
client address (frontier.api.login_throttle): the form then answers 429 with Retry-After."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from frontier.api import sessions
from frontier.api.auth import LoginRequired, role_of_sent_token, session_of, tokens_of
from frontier.api.context import context_of
from frontier.api.errors import BadBody, RateLimited
from frontier.api.routes.pages import _render
from frontier.api.session_store import SessionStore

router = APIRouter(tags=["dashboard"], include_in_schema=False)
FORM_MAX_BYTES = 8 * 1024  # a token and a path


def safe_next(value: str | None) -> str:
    """Only a path on this server ("/..." but not "//host" or "/\\host"): never an open
    redirect."""
    if not value or not value.startswith("/") or value[1:2] in ("/", "\\"):
        return "/"
    return value


async def read_form(request: Request) -> dict[str, str]:
    """A small urlencoded form (python-multipart is not a dependency and a form of two
    fields needs only the standard library's parser); 400 for anything else."""
    if request.headers.get("content-type", "").split(";")[0].strip() != (
        "application/x-www-form-urlencoded"
    ):
        raise BadBody("send the form as application/x-www-form-urlencoded")
    body = await request.body()
    if len(body) > FORM_MAX_BYTES:
        raise BadBody(f"the form is larger than {FORM_MAX_BYTES} bytes")
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        raise BadBody("the form is not UTF-8") from None
    return {name: values[-1] for name, values in fields.items()}


def login_redirect(_request: Request, exc: Exception) -> Response:
    """The answer to `LoginRequired`: 303 to the form, remembering the page."""
    assert isinstance(exc, LoginRequired)
    return RedirectResponse(f"/login?next={quote(exc.next_path, safe='')}", status_code=303)


async def _form(
    request: Request, next_path: str, error: str | None = None, status: int = 200
) -> HTMLResponse:
    settings = context_of(request).settings
    return _render(
        "login.html",
        status,
        next_path=next_path,
        error=error,
        session=await session_of(request),
        can_log_in=bool(settings.api_token or settings.api_read_token),
        hours=settings.api_session_hours,
    )


@router.get("/login", response_class=HTMLResponse)
async def login_form(request: Request) -> HTMLResponse:
    return await _form(request, safe_next(request.query_params.get("next")))


@router.post("/login", response_class=HTMLResponse)
async def log_in(request: Request) -> Response:
    form = await read_form(request)
    next_path = safe_next(form.get("next"))
    context = context_of(request)
    tokens = tokens_of(context)
    try:
        role = role_of_sent_token(request, form.get("token", ""))
    except RateLimited as exc:
        held = await _form(request, next_path, f"Not checked: {exc.message}.", exc.status)
        held.headers.update(exc.headers or {})
        return held
    if role is None:
        return await _form(request, next_path, "That is not the read or the write token.", 401)
    token = tokens[role]
    assert token is not None
    lifetime_s = context.settings.api_session_hours * 3600
    now = time.time()
    value = sessions.issue(role, token, now=now, lifetime_s=lifetime_s)
    session = sessions.verify(value, tokens, now=now)
    assert session is not None  # just signed
    await SessionStore(context.db).open(session)
    response = RedirectResponse(next_path, status_code=303)
    response.set_cookie(
        sessions.COOKIE,
        value,
        max_age=int(lifetime_s),
        httponly=True,
        samesite="strict",
        secure=context.settings.api_secure_cookies or request.url.scheme == "https",
        path="/",
    )
    return response


@router.post("/logout")
async def log_out(request: Request) -> Response:
    form = await read_form(request)
    session = await session_of(request)
    if session is not None:
        if not sessions.csrf_matches(session, form.get("csrf")):
            raise BadBody("the form's CSRF token is missing or wrong: reload the page")
        await SessionStore(context_of(request).db).close(session)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(sessions.COOKIE, path="/", httponly=True, samesite="strict")
    return response
