"""A WebSub hub for tests, on 127.0.0.1, following the W3C Recommendation
(https://www.w3.org/TR/websub/):

- section 5.1: a subscriber POSTs `hub.callback`, `hub.mode` (subscribe or unsubscribe),
  `hub.topic`, and optionally `hub.lease_seconds` and `hub.secret` (under 200 bytes) as a
  form; the hub answers 202 Accepted (400 for a malformed request);
- section 5.3: the hub then verifies the intent with a GET to the callback carrying
  `hub.mode`, `hub.topic`, `hub.challenge` and (subscribe) `hub.lease_seconds` (again, up
  to three times, when the connection fails); the subscription (or its end) holds only
  when the callback answers 2xx echoing the challenge;
- section 5.2: `deny()` tells a callback its subscription was denied (`hub.mode=denied`,
  `hub.reason`);
- sections 7 and 8: `publish()` POSTs the topic's new content to every verified
  subscriber, with the `Link` headers rel=hub and rel=self and, when the subscriber gave
  a secret, `X-Hub-Signature: sha256=<HMAC of the body>`; a 410 answer ends that
  subscription.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import urlencode

import aiohttp
from aiohttp import web

from tests.local_site import serve_on_loopback

VERIFY_ATTEMPTS = 3  # a hub tries a verification again when the callback does not answer


@dataclass
class HubSubscription:
    callback: str
    topic: str
    secret: str | None
    lease_seconds: int


@dataclass
class Verification:
    mode: str
    topic: str
    callback: str
    status: int
    confirmed: bool  # answered 2xx with the challenge echoed


@dataclass
class LocalHub:
    address: str = "127.0.0.1"
    lease_seconds: int = 86_400  # what the hub grants, whatever is asked
    port: int = 0
    subscriptions: dict[tuple[str, str], HubSubscription] = field(default_factory=dict)
    requests: list[dict[str, str]] = field(default_factory=list)  # every form received
    verifications: list[Verification] = field(default_factory=list)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    _runner: web.AppRunner | None = None
    _session: aiohttp.ClientSession | None = None

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}/"

    async def start(self) -> LocalHub:
        self._session = aiohttp.ClientSession()
        self._runner, self.port = await serve_on_loopback(self._dispatch, self.address)
        return self

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        if request.method != "POST":
            return web.Response(status=405)
        form = {k: str(v) for k, v in (await request.post()).items()}
        self.requests.append(form)
        mode, callback, topic = (form.get(f"hub.{k}") for k in ("mode", "callback", "topic"))
        secret = form.get("hub.secret")
        if mode not in ("subscribe", "unsubscribe") or not callback or not topic:
            return web.Response(status=400, text="hub.mode, hub.callback and hub.topic needed")
        if secret is not None and len(secret.encode()) >= 200:
            return web.Response(status=400, text="hub.secret must be under 200 bytes")
        task = asyncio.create_task(self._verify(mode, callback, topic, secret))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return web.Response(status=202)

    async def _verify(self, mode: str, callback: str, topic: str, secret: str | None) -> None:
        challenge = secrets.token_urlsafe(16)
        query = {"hub.mode": mode, "hub.topic": topic, "hub.challenge": challenge}
        if mode == "subscribe":
            query["hub.lease_seconds"] = str(self.lease_seconds)
        assert self._session is not None
        for attempt in range(VERIFY_ATTEMPTS):  # a callback that did not answer: again
            try:
                async with self._session.get(_with_query(callback, query)) as answer:
                    body = await answer.text()
                    confirmed = 200 <= answer.status < 300 and body == challenge
                break
            except aiohttp.ClientError:
                if attempt + 1 == VERIFY_ATTEMPTS:
                    raise
        self.verifications.append(Verification(mode, topic, callback, answer.status, confirmed))
        if not confirmed:
            return
        if mode == "subscribe":
            self.subscriptions[callback, topic] = HubSubscription(
                callback, topic, secret, self.lease_seconds
            )
        else:
            self.subscriptions.pop((callback, topic), None)

    async def deny(self, callback: str, topic: str, reason: str) -> int:
        """Section 5.2: the subscription is denied; returns the callback's status."""
        assert self._session is not None
        query = {"hub.mode": "denied", "hub.topic": topic, "hub.reason": reason}
        async with self._session.get(_with_query(callback, query)) as answer:
            return answer.status

    async def publish(
        self,
        topic: str,
        body: bytes,
        content_type: str = "application/atom+xml",
        *,
        secret_override: str | None = None,
        sign: bool = True,
    ) -> list[int]:
        """Distribute `body` to the topic's subscribers; their answers' statuses.
        `secret_override` signs with another secret (a forger), `sign=False` not at all."""
        assert self._session is not None
        statuses = []
        for key, subscription in list(self.subscriptions.items()):
            if subscription.topic != topic:
                continue
            headers = {
                "Content-Type": content_type,
                "Link": f'<{self.url}>; rel="hub", <{topic}>; rel="self"',
            }
            secret = secret_override or subscription.secret
            if sign and secret:
                digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
                headers["X-Hub-Signature"] = f"sha256={digest}"
            async with self._session.post(
                subscription.callback, data=body, headers=headers
            ) as answer:
                statuses.append(answer.status)
                if answer.status == 410:
                    self.subscriptions.pop(key, None)
        return statuses


def _with_query(url: str, query: dict[str, str]) -> str:
    return f"{url}{'&' if '?' in url else '?'}{urlencode(query)}"


@asynccontextmanager
async def running_hub(address: str = "127.0.0.1") -> AsyncIterator[LocalHub]:
    hub = await LocalHub(address).start()
    try:
        yield hub
    finally:
        await hub.stop()
