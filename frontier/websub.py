"""WebSub (W3C Recommendation, https://www.w3.org/TR/websub/): what the poller and the
API's callback share. The subscriptions and the notifications waiting for the poller are
the tables of migration 0045 (SQL in frontier/sql/websub.sql); `WebSubRepository` is
their one repository.

- the poller (`poller.websub`) subscribes to the hub a feed declares, with the callback
  `callback_url(public_url, id)` and a secret of its own (`new_secret()`), renews before
  the lease ends and unsubscribes when the feed stops declaring the hub, declares
  another (the old row is unsubscribed beside the new one: migration 0046) or its source
  goes; it applies the notifications the callback kept;
- the API's callback (`frontier.api.routes.websub`) answers the hub's verification of
  intent (section 5.3) and checks each notification's `X-Hub-Signature` (section 8) with
  `signature_problem`; a notification that passes is stored and the pollers woken
  (NOTIFY `frontier_websub`), one that fails is answered 2xx as the recommendation asks
  and ignored.

The callback never parses the body: a feed from outside is parsed by the poller in its
parse pool (frontier.parse_pool), not on the API's event loop, and a notification that
comes while no poller runs waits in the table instead of being lost.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from frontier.db import Database
from frontier.sql import load

_SQL = load("websub")

NOTIFY_CHANNEL = "frontier_websub"
CALLBACK_PREFIX = "/websub"
SECRET_BYTES = 32  # the recommendation caps hub.secret at 200 bytes
# The signature methods of section 8; sha1 is the one every hub must support.
SIGNATURE_METHODS = {
    "sha1": hashlib.sha1,
    "sha256": hashlib.sha256,
    "sha384": hashlib.sha384,
    "sha512": hashlib.sha512,
}


def new_secret() -> str:
    """A random secret for one subscription (URL-safe text, 43 characters)."""
    return secrets.token_urlsafe(SECRET_BYTES)


def callback_url(public_url: str, subscription_id: UUID) -> str:
    """The API's callback for one subscription, under `FRONTIER_PUBLIC_URL`."""
    return f"{public_url.rstrip('/')}{CALLBACK_PREFIX}/{subscription_id}"


def signature_problem(header: str | None, body: bytes, secret: str) -> str | None:
    """What is wrong with `X-Hub-Signature: method=hex` for `body` under `secret`, or None
    when it holds (an HMAC of the raw body, compared in constant time)."""
    if not header:
        return "no X-Hub-Signature"
    method, _, digest = header.strip().partition("=")
    algorithm = SIGNATURE_METHODS.get(method.strip().lower())
    if algorithm is None:
        return f"unknown X-Hub-Signature method {method[:20]!r}"
    expected = hmac.new(secret.encode(), body, algorithm).hexdigest()
    if not hmac.compare_digest(expected, digest.strip().lower()):
        return "X-Hub-Signature does not match the body"
    return None


@dataclass(frozen=True, slots=True)
class Subscription:
    id: UUID
    source_id: UUID
    topic: str
    hub: str
    secret: str
    state: str
    lease_until: datetime | None

    @classmethod
    def of(cls, row: Any) -> Subscription:
        return cls(
            row["id"],
            row["source_id"],
            row["topic"],
            row["hub"],
            row["secret"],
            row["state"],
            row["lease_until"],
        )

    def __repr__(self) -> str:  # never the secret, wherever it is printed
        return f"Subscription({self.id}, {self.topic!r} at {self.hub!r}, {self.state})"


@dataclass(frozen=True, slots=True)
class Notification:
    id: UUID
    source_id: UUID
    topic: str
    content_type: str | None
    body: bytes
    received_at: datetime


class WebSubRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    # -- the poller -------------------------------------------------------------------

    async def declared(self, source_id: UUID, hub: str, topic: str) -> bool:
        """The source's feed declares `hub` for `topic`; True if it is to be asked (new,
        or changed)."""
        row = await self._db.fetchrow(_SQL["declared"], source_id, hub, topic, new_secret())
        return row is not None

    async def undeclared(self, source_id: UUID) -> None:
        await self._db.execute(_SQL["undeclared"], source_id)

    async def orphaned(self) -> None:
        await self._db.execute(_SQL["orphaned"])

    async def take_due(
        self, limit: int, *, renew_before_s: float, retry_s: float, now: datetime | None = None
    ) -> list[Subscription]:
        rows = await self._db.fetch(_SQL["take_due"], limit, now, renew_before_s, retry_s)
        return [Subscription.of(r) for r in rows]

    async def request_failed(self, subscription_id: UUID, error: str) -> None:
        await self._db.execute(_SQL["request_failed"], subscription_id, error[:500])

    async def forget(self, subscription_id: UUID) -> None:
        await self._db.execute(_SQL["forget"], subscription_id)

    async def active_sources(self, source_ids: list[UUID], now: datetime) -> set[UUID]:
        rows = await self._db.fetch(_SQL["active_sources"], source_ids, now)
        return {r["source_id"] for r in rows}

    async def take_notifications(self, limit: int, *, lease_s: float) -> list[Notification]:
        """Up to `limit` notifications, each leased for `lease_s` (`applied` deletes it)."""
        rows = await self._db.fetch(_SQL["take_notifications"], limit, lease_s)
        return [
            Notification(
                r["id"], r["source_id"], r["topic"], r["content_type"], r["body"], r["received_at"]
            )
            for r in rows
        ]

    async def applied(self, notification_ids: list[UUID]) -> None:
        await self._db.execute(_SQL["applied"], notification_ids)

    # -- the API's callback -----------------------------------------------------------

    async def get(self, subscription_id: UUID) -> Subscription | None:
        row = await self._db.fetchrow(_SQL["by_id"], subscription_id)
        return Subscription.of(row) if row is not None else None

    async def verified(
        self, subscription_id: UUID, topic: str, lease_s: float, now: datetime | None = None
    ) -> bool:
        row = await self._db.fetchrow(_SQL["verified"], subscription_id, topic, lease_s, now)
        return row is not None

    async def unsubscribed(self, subscription_id: UUID, topic: str) -> bool:
        return await self._db.fetchrow(_SQL["unsubscribed"], subscription_id, topic) is not None

    async def denied(self, subscription_id: UUID, topic: str, reason: str) -> bool:
        row = await self._db.fetchrow(
            _SQL["denied"], subscription_id, topic, f"denied by the hub: {reason}"[:500]
        )
        return row is not None

    async def notified(self, subscription_id: UUID, content_type: str | None, body: bytes) -> None:
        await self._db.fetch(_SQL["notified"], subscription_id, content_type, body)

    async def bad_signature(self, subscription_id: UUID, problem: str) -> None:
        await self._db.execute(_SQL["bad_signature"], subscription_id, problem)
