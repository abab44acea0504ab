"""Who may do what. Writes need FRONTIER_API_TOKEN (a bearer token; from the dashboard, a
session made with it plus the form's CSRF token). Reads are open unless
FRONTIER_API_READ_AUTH is on; then they take the write token, the read-only
FRONTIER_API_READ_TOKEN or a dashboard session. A browser asking for a page without any
of them is sent to the login form (`/login`, frontier.api.routes.login); a JSON client
gets 401 with `WWW-Authenticate: Bearer`. Tokens are compared in constant time. A session
cookie acts only while the server holds its session (frontier.api.session_store): logging
out ends it. Wrong tokens, as a bearer token or at the login form, are throttled per client
address (frontier.api.login_throttle)."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from frontier.api import sessions
from frontier.api.context import ApiContext, context_of
from frontier.api.errors import ApiError, RateLimited, Unauthorized, WritesDisabled
from frontier.api.read_gate import client_of
from frontier.api.session_store import SessionStore
from frontier.api.sessions import Role, Session

bearer = HTTPBearer(
    auto_error=False, description="FRONTIER_API_TOKEN (or FRONTIER_API_READ_TOKEN for reads)"
)

HOW_TO_SET = (
    "set FRONTIER_API_TOKEN to a secret in the server's environment and send it as "
    "'Authorization: Bearer <token>'"
)
CHALLENGE = {"WWW-Authenticate": "Bearer"}


Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


class LoginRequired(Unauthorized):
    """A browser asked for a dashboard page without a session: answered with a redirect
    to the login form (frontier.api.routes.login), not a JSON 401."""

    def __init__(self, next_path: str) -> None:
        super().__init__("log in to see the dashboard", headers=CHALLENGE)
        self.next_path = next_path


class CsrfRefused(ApiError):
    status, code = 403, "forbidden"


def tokens_of(context: ApiContext) -> dict[Role, str | None]:
    settings = context.settings
    return {"write": settings.api_token, "read": settings.api_read_token}


async def session_of(request: Request) -> Session | None:
    """The dashboard session the request's cookie holds, if it is valid now: signed with
    its role's current token, not expired, and still open on the server (not logged out).
    Looked up once per request."""
    if hasattr(request.state, "session"):
        found: Session | None = request.state.session
        return found
    context = context_of(request)
    value = request.cookies.get(sessions.COOKIE)
    session = sessions.verify(value, tokens_of(context), now=time.time()) if value else None
    if session is not None and not await SessionStore(context.reads).alive(session):
        session = None
    request.state.session = session
    return session


def role_of_sent_token(request: Request, sent: str) -> Role | None:
    """Which role the token a client sent (bearer or login form) is of; raises
    RateLimited (429) while its address is held for wrong tokens, and counts a wrong one."""
    context = context_of(request)
    client, now = client_of(request), time.monotonic()
    context.login_throttle.check(client, now=now)
    role = sessions.role_of_token(sent, tokens_of(context))
    if role is None:
        context.login_throttle.failed(client, now=now)
    return role


def _sent_bearer_role(
    request: Request, credentials: HTTPAuthorizationCredentials | None
) -> Role | None:
    """The role of the request's bearer token, if it sent one (throttled)."""
    if credentials is None or credentials.scheme.lower() != "bearer":
        return None
    return role_of_sent_token(request, credentials.credentials)


def has_token(request: Request, credentials: HTTPAuthorizationCredentials | None) -> bool:
    """The request carries a valid bearer token (of either role); no database needed. An
    address held for wrong tokens is told it has none (for /healthz, which always
    answers)."""
    try:
        return _sent_bearer_role(request, credentials) is not None
    except RateLimited:
        return False


async def is_identified(request: Request, credentials: HTTPAuthorizationCredentials | None) -> bool:
    """The request carries a valid token or dashboard session (of either role); a wrong
    bearer token counts against the client's address."""
    role = _sent_bearer_role(request, credentials)
    return role is not None or await session_of(request) is not None


def _wants_page(request: Request) -> bool:
    """A browser navigating to a page (not the JSON API, not /metrics)."""
    path = request.url.path
    return (
        request.method == "GET"
        and "text/html" in request.headers.get("accept", "")
        and not path.startswith("/api/")
        and path != "/metrics"
    )


async def require_write(request: Request, credentials: Credentials) -> None:
    context = context_of(request)
    if not context.settings.api_token:
        raise WritesDisabled(f"writes are refused: no API token is configured; {HOW_TO_SET}")
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise Unauthorized(
            "missing bearer token: send 'Authorization: Bearer <FRONTIER_API_TOKEN>'",
            headers=CHALLENGE,
        )
    role = _sent_bearer_role(request, credentials)
    if role == "read":
        raise Unauthorized(
            "the read-only token (FRONTIER_API_READ_TOKEN) cannot write: send FRONTIER_API_TOKEN",
            headers=CHALLENGE,
        )
    if role != "write":
        raise Unauthorized(
            "wrong bearer token: send the server's FRONTIER_API_TOKEN", headers=CHALLENGE
        )


async def require_read(request: Request, credentials: Credentials) -> None:
    context = context_of(request)
    if not context.settings.api_read_auth or await is_identified(request, credentials):
        return
    if not (context.settings.api_token or context.settings.api_read_token):
        raise WritesDisabled(
            "reads are refused: FRONTIER_API_READ_AUTH is on but no token is configured; "
            "set FRONTIER_API_READ_TOKEN (reads only) or FRONTIER_API_TOKEN"
        )
    if _wants_page(request):
        raise LoginRequired(
            request.url.path + (f"?{request.url.query}" if request.url.query else "")
        )
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise Unauthorized(
            "missing bearer token: send 'Authorization: Bearer <FRONTIER_API_READ_TOKEN or "
            "FRONTIER_API_TOKEN>'",
            headers=CHALLENGE,
        )
    raise Unauthorized(
        "wrong bearer token: send the server's FRONTIER_API_READ_TOKEN or FRONTIER_API_TOKEN",
        headers=CHALLENGE,
    )


async def session_for_write(request: Request, csrf: str | None) -> Session:
    """The session behind a dashboard form's write: made with the write token, and the
    form carried its CSRF token (`csrf`); else 401 or 403."""
    session = await session_of(request)
    if session is None or not session.can_write:
        raise Unauthorized("log in with the write token (FRONTIER_API_TOKEN) to act")
    if not sessions.csrf_matches(session, csrf):
        raise CsrfRefused("the form's CSRF token is missing or wrong: reload the page")
    return session
