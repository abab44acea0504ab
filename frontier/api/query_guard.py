"""`refuse_nul`: an app-wide dependency refusing NUL characters in query parameters with
422 before any route looks at them (PostgreSQL text cannot hold U+0000; without this, a
`?source=a%00b` reached the database and answered 500)."""

from __future__ import annotations

from fastapi import Request

from frontier.api.errors import FieldInvalid


async def refuse_nul(request: Request) -> None:
    for name, value in request.query_params.multi_items():
        if "\x00" in name or "\x00" in value:
            raise FieldInvalid.of(
                name.replace("\x00", "\\u0000"), "must not contain NUL characters"
            )
