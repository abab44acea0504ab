"""JSON request bodies read by hand, after the route's token check has passed.

FastAPI reads and parses a declared body parameter before any dependency runs, so a route
taking one would buffer a stranger's body before checking the token. The sources routes
take the `Request` instead and call `read_model` here: the body is read (its size capped
by `frontier.api.body_limit.BodyLimit` while it streams), checked in one linear pass of
ijson's C parser for nesting deeper than MAX_JSON_DEPTH and for NUL characters (PostgreSQL
text cannot hold them), parsed with `json`, and validated by the model. The CPU work runs
in a thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, TypeVar

import ijson
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from frontier.api.errors import BadBody, FieldInvalid

MAX_JSON_DEPTH = 32  # arrays and objects inside each other; our bodies need 3

Model = TypeVar("Model", bound=BaseModel)


def too_deep() -> BadBody:
    return BadBody(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")


def parse_json(data: bytes) -> Any:
    """`data` as JSON, refusing nesting past MAX_JSON_DEPTH (400) and NUL characters (422)
    before `json.loads` sees it; cost linear in `len(data)`. Invalid JSON is a 422 on the
    field `body`, as FastAPI answers it for a declared body."""
    if not data.strip():
        raise FieldInvalid.of("body", "required: a JSON object")
    depth = 0
    try:
        for event, value in ijson.basic_parse(data):
            if event in ("start_map", "start_array"):
                depth += 1
                if depth > MAX_JSON_DEPTH:
                    raise too_deep()
            elif event in ("end_map", "end_array"):
                depth -= 1
            elif event in ("string", "map_key") and "\x00" in value:
                raise FieldInvalid.of("body", "text must not contain NUL characters (\\u0000)")
    except (ijson.JSONError, ValueError):
        pass  # json.loads below says where, in one line; the prefix read was shallow
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8
        raise FieldInvalid.of("body", f"invalid JSON: {exc}") from None


async def read_model(request: Request, model: type[Model]) -> Model:
    """The request's JSON body validated as `model`; 422 names each bad field."""
    data = await request.body()
    value = await asyncio.to_thread(parse_json, data)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise RequestValidationError(exc.errors(include_url=False, include_input=False)) from None
