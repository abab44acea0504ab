"""The API's one error shape and the handlers that produce it.

Every error answer is

    {"error": {"code": "validation_error", "message": "priority: ...",
               "fields": [{"field": "priority", "message": "..."}]}}

`code` is stable and machine-readable, `message` is for people, and `fields` (possibly
empty) names each offending input field, dotted for nested ones (`url_filters.include.0`).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from frontier.errors import DatabaseUnavailable, FrontierError, StatementTimedOut
from frontier.sinks import SinkUnavailable
from frontier.sources import InvalidSource, UnknownSource

log = logging.getLogger(__name__)

_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "body_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "rate_limited",
    500: "internal_error",
    503: "unavailable",
}


class ApiError(FrontierError):
    """A request the API refuses; carries its HTTP status, code and offending fields."""

    status = 400
    code = "bad_request"

    def __init__(
        self,
        message: str,
        *,
        fields: list[dict[str, str]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields or []
        self.headers = headers


class BadBody(ApiError):
    status, code = 400, "bad_body"


class RequestTooLarge(ApiError):
    status, code = 413, "body_too_large"


class UnsupportedMediaType(ApiError):
    status, code = 415, "unsupported_media_type"


class Unauthorized(ApiError):
    status, code = 401, "unauthorized"


class WritesDisabled(ApiError):
    status, code = 403, "writes_disabled"


class RateLimited(ApiError):
    status, code = 429, "rate_limited"


class FieldInvalid(ApiError):
    status, code = 422, "validation_error"

    @classmethod
    def of(cls, field: str, message: str) -> FieldInvalid:
        return cls(f"{field}: {message}", fields=[{"field": field, "message": message}])


def error_response(
    status: int,
    code: str,
    message: str,
    fields: list[dict[str, str]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "fields": fields or []}}
    return JSONResponse(body, status_code=status, headers=headers)


def _field_of(message: str) -> list[dict[str, str]]:
    """`InvalidSource("priority: must be ...")` names its field before the colon."""
    head, sep, rest = message.partition(": ")
    if sep and head and " " not in head:
        return [{"field": head, "message": rest}]
    return []


def _location(loc: tuple[Any, ...]) -> str:
    parts = [str(part) for part in loc]
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    return ".".join(parts) or "body"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.fields, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def validation(_request: Request, exc: RequestValidationError) -> JSONResponse:
        fields = [
            {"field": _location(tuple(error.get("loc", ()))), "message": str(error.get("msg"))}
            for error in exc.errors()
        ]
        message = "; ".join(f"{f['field']}: {f['message']}" for f in fields) or "invalid request"
        return error_response(422, "validation_error", message, fields)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _CODES.get(exc.status_code, "error")
        return error_response(
            exc.status_code, code, str(exc.detail), headers=getattr(exc, "headers", None)
        )

    @app.exception_handler(UnknownSource)
    async def unknown_source(_request: Request, exc: UnknownSource) -> JSONResponse:
        return error_response(404, "not_found", str(exc))

    @app.exception_handler(InvalidSource)
    async def invalid_source(_request: Request, exc: InvalidSource) -> JSONResponse:
        return error_response(422, "validation_error", str(exc), _field_of(str(exc)))

    @app.exception_handler(DatabaseUnavailable)
    async def unavailable(request: Request, exc: DatabaseUnavailable) -> JSONResponse:
        # One log line per outage (and one when it is back), not a traceback per request.
        request.app.state.context.db.outage.report(exc, None)
        return error_response(503, "unavailable", str(exc), headers={"Retry-After": "5"})

    @app.exception_handler(StatementTimedOut)
    async def too_expensive(_request: Request, exc: StatementTimedOut) -> JSONResponse:
        # Not retryable as it is (no Retry-After): the same query costs the same.
        return error_response(503, "query_too_expensive", str(exc))

    @app.exception_handler(SinkUnavailable)
    async def sink_unavailable(_request: Request, exc: SinkUnavailable) -> JSONResponse:
        return error_response(503, "unavailable", str(exc), headers={"Retry-After": "5"})

    @app.exception_handler(FrontierError)
    async def frontier_error(_request: Request, exc: FrontierError) -> JSONResponse:
        return error_response(422, "invalid", str(exc), _field_of(str(exc)))


class Unhandled:
    """An ASGI middleware that answers an exception no handler took with the 500 of the
    error shape and logs it once, with its traceback. (A handler for `Exception` runs in
    Starlette's ServerErrorMiddleware, which raises the exception again after answering,
    for the server to log a second traceback.) Once the answer has started, the exception
    goes on up: there is nothing left to answer with."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception:
            if started:
                raise
            log.exception("unhandled error on %s %s", scope["method"], scope["path"])
            answer = error_response(500, "internal_error", "internal error; see the server log")
            await answer(scope, receive, send)
