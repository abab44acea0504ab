"""`BodyLimit`: an ASGI middleware giving every request body a size cap, for all routes.

A body whose Content-Length is over its cap is answered 413 at once, unread; a body sent
without one (chunked) is counted while it streams and the read that passes the cap raises
`RequestTooLarge` (413) inside the route. The cap is chosen per path: the bulk import has
its own (FRONTIER_API_IMPORT_MAX_BYTES), every other body the JSON one
(FRONTIER_API_JSON_MAX_BYTES). Nothing here reads a body the route does not ask for, so a
route that checks the token first never reads the body of a request without one (uvicorn
discards a body left unread once the answer is sent, 64 KiB at a time). Only the 413 for
a declared length closes the connection: closing after any early answer would reset
connections whose small body was still on its way, losing the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from frontier.api.errors import RequestTooLarge, error_response


@dataclass(frozen=True, slots=True)
class Cap:
    limit: int
    setting: str  # the environment variable that sets it, named in the 413 message


class BodyLimit:
    def __init__(self, app: ASGIApp, cap_for: Callable[[str], Cap]) -> None:
        self.app = app
        self.cap_for = cap_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.cap_for(scope["path"])
        length = _content_length(scope)
        if length is not None and length > cap.limit:
            message = f"request body of {length} bytes is over {cap.limit} bytes ({cap.setting})"
            await error_response(413, "body_too_large", message, headers={"Connection": "close"})(
                scope, receive, send
            )
            return
        read = 0

        async def counted() -> Message:
            nonlocal read
            message = await receive()
            if message["type"] == "http.request":
                read += len(message.get("body", b""))
                if read > cap.limit:
                    raise RequestTooLarge(f"request body over {cap.limit} bytes ({cap.setting})")
            return message

        await self.app(scope, counted, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None
