"""Bearer-token checks: writes always need FRONTIER_API_TOKEN, reads only when
FRONTIER_API_READ_AUTH is on. Tokens are compared in constant time."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from frontier.api.context import ApiContext, context_of
from frontier.api.errors import Unauthorized, WritesDisabled

bearer = HTTPBearer(auto_error=False, description="FRONTIER_API_TOKEN")

HOW_TO_SET = (
    "set FRONTIER_API_TOKEN to a secret in the server's environment and send it as "
    "'Authorization: Bearer <token>'"
)


Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def _check(
    context: ApiContext, credentials: HTTPAuthorizationCredentials | None, what: str
) -> None:
    expected = context.settings.api_token
    if not expected:
        raise WritesDisabled(f"{what} are refused: no API token is configured; {HOW_TO_SET}")
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise Unauthorized(
            "missing bearer token: send 'Authorization: Bearer <FRONTIER_API_TOKEN>'",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if not hmac.compare_digest(credentials.credentials.encode(), expected.encode()):
        raise Unauthorized("wrong bearer token", headers={"WWW-Authenticate": "Bearer"})


async def require_write(request: Request, credentials: Credentials) -> None:
    _check(context_of(request), credentials, "writes")


async def require_read(request: Request, credentials: Credentials) -> None:
    context = context_of(request)
    if context.settings.api_read_auth:
        _check(context, credentials, "reads")
