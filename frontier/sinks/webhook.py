"""The webhook sink: each document POSTed as JSON to a receiver's URL, signed the way the
Standard Webhooks specification says (Miniflux's X-Miniflux-Signature, an HMAC-SHA256 of
the body, was the model; this adds the id and the timestamp to what is signed, against
replays):

- `webhook-id`: the delivery's idempotency key (frontier.sinks.payload.delivery_key: the
  same document version always has the same one, retries included);
- `webhook-timestamp`: the time of the attempt, integer Unix seconds;
- `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed by the
  secret: a `whsec_<base64>` secret is the base64-decoded rest, any other its UTF-8 bytes.

The body is `{"type": "document.stored", "timestamp": ISO, "data": <document>}` (the
document as frontier.sinks.payload.document_payload builds it), or with `batch` > 1
`{"type": "documents.stored", ..., "data": [{"id": <key>, "document": ...}, ...]}`, its
id a hash of the batch's keys; a deletion is `document.deleted` with `{"url_hash": ...}`.

The target is reached through the safe client (frontier.safe_http: the SSRF guard, unless
FRONTIER_ALLOW_PRIVATE_NETWORKS or FRONTIER_ALLOWED_NETWORKS lets it through), no redirect
followed, each request bounded by `timeout_s` and the body by `max_body_bytes` (a
document that alone is larger is refused: DocumentRejected); at most
FRONTIER_WEBHOOK_MAX_IN_FLIGHT requests at once per receiver host. A 2xx answer is
success; 400, 413 and 422 refuse the documents for good (DocumentRejected); anything
else, or no answer, is SinkUnavailable: a required webhook's URLs wait (the fetcher's
backoff), an optional one's rows are tried again by the outbox with backoff.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from frontier.safe_http.client import SafeClient
from frontier.safe_http.errors import HttpError
from frontier.sinks import DocumentRejected, RawDocument, SinkUnavailable
from frontier.sinks.payload import Prepared, delivery_key, document_payload

REFUSED = frozenset({400, 413, 422})  # the receiver will not take these documents, ever
SECRET_PREFIX = "whsec_"


class NotSent(SinkUnavailable):
    """A document of a write not sent: another POST of the write failed first."""


def signing_key(secret: str) -> bytes:
    """The HMAC key of a secret: Standard Webhooks' `whsec_<base64>`, else its bytes."""
    if secret.startswith(SECRET_PREFIX):
        try:
            return base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
        except ValueError:
            pass  # not base64 after all: the whole string is the key
    return secret.encode()


def sign(key: bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` value of a request (the body fed to the HMAC as it is,
    not copied behind the id and the timestamp first)."""
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode(), hashlib.sha256)
    mac.update(body)
    return "v1," + base64.b64encode(mac.digest()).decode()


def signed_headers(
    key: bytes, msg_id: str, body: bytes, now: float | None = None
) -> dict[str, str]:
    timestamp = int(time.time() if now is None else now)
    return {
        "Content-Type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(key, msg_id, timestamp, body),
    }


def _event(kind: str, data: str) -> bytes:
    """An event's body around `data`, JSON text."""
    when = _iso_second(int(time.time()))
    return f'{{"type": "{kind}", "timestamp": "{when}", "data": {data}}}'.encode()


@lru_cache(maxsize=2)
def _iso_second(second: int) -> str:
    """An event's timestamp, ISO 8601 in UTC to the second: made once a second, not once
    a POST."""
    return datetime.fromtimestamp(second, UTC).isoformat()


class WebhookSink:
    name = "webhook"

    def __init__(
        self,
        client: SafeClient,
        url: str,
        key: bytes,
        *,
        batch: int = 1,
        timeout_s: float = 10.0,
        max_body_bytes: int = 8 * 1024 * 1024,
        max_in_flight: int = 4,
    ) -> None:
        self._client = client
        self.url = url
        self._key = key
        self._batch = batch
        self._timeout_s = timeout_s
        self._max_body = max_body_bytes
        # One receiver per sink: the host's requests in flight (FRONTIER_WEBHOOK_MAX_IN_FLIGHT).
        self._in_flight = asyncio.Semaphore(max_in_flight)
        self._max_in_flight = max_in_flight
        self._host = urlsplit(url).hostname or url

    async def write(self, documents: Sequence[RawDocument]) -> None:
        await self.write_prepared(
            [Prepared(d.url_hash, _key(d), json.dumps(document_payload(d))) for d in documents]
        )

    async def write_prepared(self, items: Sequence[Prepared]) -> None:
        """`write`, of documents already as their payload's JSON (the outbox's rows, sent
        as they are stored: no decoding and encoding again)."""
        refused: dict[str, str] = {}
        posts = []
        for group in _groups(list(items), self._batch):
            body, msg_id = self._body(group)
            if len(body) > self._max_body and len(group) > 1:
                for item in group:  # too large together: one by one
                    one, one_id = self._body([item])
                    posts.append((one, one_id, [item]))
            else:
                posts.append((body, msg_id, group))
        sendable = []
        for body, msg_id, group in posts:
            if len(body) > self._max_body:
                for item in group:
                    refused[item.url_hash] = f"{len(body)} bytes, over max_body_bytes"
            else:
                sendable.append((body, msg_id, group))
        answers = await self._post_all(sendable)
        errors = [a for a in answers if isinstance(a, BaseException)]
        if errors:  # the batch is not stored; sent ones come again with their ids
            raise _first(errors)
        for (_, _, group), answer in zip(sendable, answers, strict=True):
            if isinstance(answer, str):
                refused.update((item.url_hash, answer) for item in group)
        if refused:
            raise DocumentRejected(
                f"the webhook refused {len(refused)} documents", list(refused), refused
            )

    def _body(self, group: list[Prepared]) -> tuple[bytes, str]:
        """The event of a group, assembled around the payloads' JSON as it is."""
        if self._batch == 1:
            item = group[0]
            return _event("document.stored", item.payload), item.key
        data = ", ".join(
            f'{{"id": {json.dumps(item.key)}, "document": {item.payload}}}' for item in group
        )
        joined = "\n".join(item.key for item in group).encode()
        return _event("documents.stored", f"[{data}]"), "batch_" + hashlib.sha256(
            joined
        ).hexdigest()[:40]

    async def delete(self, url_hashes: Sequence[str]) -> None:
        posts = [
            (_event("document.deleted", json.dumps({"url_hash": h})), delivery_key(h, None), h)
            for h in sorted(set(url_hashes))
        ]
        answers = await self._post_all(posts)
        # a refused deletion is nothing to keep (the receiver has no document); one not
        # taken now comes again
        errors = [a for a in answers if isinstance(a, BaseException)]
        if errors:
            raise _first(errors)

    async def _post_all(
        self, posts: Sequence[tuple[bytes, str, object]]
    ) -> list[str | BaseException | None]:
        """POST each (body, id, _) of `posts`: each one's answer (`_post_now`'s) or error.
        At most FRONTIER_WEBHOOK_MAX_IN_FLIGHT at once per sink, writes and deletions
        together, by that many senders taking the next in turn (not a task a POST waiting
        for its turn: its task, future and wake-up cost a few us a document). Once a POST
        finds the receiver unable to take documents, those not sent yet are not (NotSent):
        a receiver that times out costs one round of timeouts, not one per document (the
        outbox's lease would run out first)."""
        answers: list[str | BaseException | None] = [None] * len(posts)
        turns = iter(range(len(posts)))
        failed = False

        async def sender() -> None:
            nonlocal failed
            for i in turns:
                # within the sink's bound: the failure is known before the next one goes
                async with self._in_flight:
                    if failed:
                        answers[i] = NotSent(f"webhook {self._host}: not sent after a failure")
                        continue
                    try:
                        answers[i] = await self._post_now(posts[i][0], posts[i][1])
                    except SinkUnavailable as exc:
                        failed = True
                        answers[i] = exc
                    except Exception as exc:  # a bug's: reported as the write's error
                        answers[i] = exc

        senders = min(self._max_in_flight, len(posts))
        if senders == 1:
            await sender()
        elif senders:
            await asyncio.gather(*(sender() for _ in range(senders)))
        return answers

    async def _post_now(self, body: bytes, msg_id: str) -> str | None:
        headers = signed_headers(self._key, msg_id, body)
        try:
            answer = await self._client.post(
                self.url, body, headers=headers, timeout_s=self._timeout_s
            )
        except HttpError as exc:
            raise SinkUnavailable(f"webhook {self._host}: {exc}") from None
        status = answer.status
        if 200 <= status < 300:
            return None
        said = answer.body[:200].decode("utf-8", "replace").strip()
        if status in REFUSED:
            return f"HTTP {status} from {self._host}" + (f": {said}" if said else "")
        raise SinkUnavailable(f"webhook {self._host}: HTTP {status}")

    async def get(self, url_hash: str) -> dict[str, Any] | None:
        return None  # a webhook does not read back

    async def health(self) -> str:
        # the host only: a receiver's URL may carry a token in its path or query
        return f"webhook to {self._host}"

    async def close(self) -> None:
        await self._client.close()


def _first(errors: list[BaseException]) -> BaseException:
    """The error a write reports: the first that is not a NotSent."""
    return next((e for e in errors if not isinstance(e, NotSent)), errors[0])


def _key(doc: RawDocument) -> str:
    return delivery_key(doc.url_hash, doc.content_hash)


def _groups(items: list[Prepared], size: int) -> list[list[Prepared]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
