"""A webhook receiver for tests: a real HTTP server on 127.0.0.1 (tests/local_site.py)
that verifies each request's Standard Webhooks signature with its own code (not
frontier's), answers 503 while `down`, and keeps what it accepted by `webhook-id`."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.local_site import LocalSite

PATH = "/hook"


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


@dataclass
class Receiver:
    site: LocalSite
    secret: str = field(default_factory=new_secret)
    down: bool = False
    attempts: int = 0
    bad_signatures: int = 0
    accepted: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.site.route(PATH, self.handle)

    @property
    def url(self) -> str:
        return self.site.url(PATH)

    def verified(self, headers: Any, body: bytes) -> bool:
        key = base64.b64decode(self.secret.removeprefix("whsec_"))
        signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
        expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        given = [s.partition(",")[2] for s in headers["webhook-signature"].split()]
        return any(hmac.compare_digest(expected, g) for g in given)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.attempts += 1
        if self.down:
            return web.Response(status=503, text="down for maintenance")
        if not self.verified(request.headers, body):
            self.bad_signatures += 1
            return web.Response(status=401, text="bad signature")
        self.accepted.append((request.headers["webhook-id"], json.loads(body)))
        return web.Response(status=204)

    def keys(self) -> list[str]:
        return [key for key, _ in self.accepted]
