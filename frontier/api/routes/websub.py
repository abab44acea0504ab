"""The WebSub callback (W3C WebSub, sections 5.3 and 7-8): `/websub/{subscription_id}`,
the URL the poller gives a hub when it subscribes (FRONTIER_PUBLIC_URL + this path).

- `GET`: the hub verifies an intent. `hub.mode=subscribe` or `unsubscribe` with the topic
  of a subscription in that state is answered 200 with `hub.challenge` echoed (the
  subscription becomes active for `hub.lease_seconds`, or is removed); anything else 404,
  so a hub never verifies what the poller did not ask. `hub.mode=denied` records the
  hub's reason (the poller asks again a day later).
- `POST`: a notification. Its `X-Hub-Signature` (sha1, sha256, sha384 or sha512: an HMAC
  of the raw body with the subscription's secret) is checked; one without a valid
  signature is answered 202 as the recommendation asks (section 8) but ignored, and
  counted on the subscription (`bad_signatures`). A valid one is stored for the poller
  and the pollers woken (NOTIFY frontier_websub): the body, a feed from outside, is never
  parsed here, on the API's event loop, but by the poller in its parse pool. The body is
  capped (FRONTIER_WEBSUB_MAX_BYTES, 413 past it). A subscription that no longer exists
  is answered 410 Gone, which tells the hub to stop.

No token: a hub has none. The subscription's random id in the path and the secret behind
the signature are what a caller must know.
"""

from __future__ import annotations

import logging
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query, Request
from fastapi.responses import PlainTextResponse, Response

from frontier.api.context import context_of
from frontier.states import WebSubState
from frontier.websub import CALLBACK_PREFIX, WebSubRepository, signature_problem

log = logging.getLogger(__name__)

router = APIRouter(tags=["websub"])

PATH = CALLBACK_PREFIX + "/{subscription_id}"
MAX_PARAM = 2000  # a topic, a challenge, a reason: what a hub sends is short
MAX_LEASE_S = 366 * 86_400  # a longer lease is held to a year (renewed before it ends)


@router.get(PATH, response_class=PlainTextResponse, responses={404: {}})
async def verify_intent(
    request: Request,
    subscription_id: UUID,
    mode: Annotated[str, Query(alias="hub.mode", max_length=20)],
    topic: Annotated[str, Query(alias="hub.topic", max_length=MAX_PARAM)],
    challenge: Annotated[str | None, Query(alias="hub.challenge", max_length=MAX_PARAM)] = None,
    lease_seconds: Annotated[int | None, Query(alias="hub.lease_seconds", ge=0)] = None,
    reason: Annotated[str | None, Query(alias="hub.reason", max_length=MAX_PARAM)] = None,
) -> Response:
    """The hub verifies an intent (or tells of a denial); 200 with the challenge when it is
    the poller's, else 404."""
    context = context_of(request)
    subscriptions = WebSubRepository(context.db)
    if mode == "denied":
        found = await subscriptions.denied(subscription_id, topic, reason or "no reason given")
        if found:
            log.warning("WebSub hub denied the subscription to %s: %s", topic, reason)
        return PlainTextResponse("", status_code=200 if found else 404)
    if challenge is None or mode not in ("subscribe", "unsubscribe"):
        return PlainTextResponse("", status_code=404)
    if mode == "subscribe":
        lease = context.settings.websub_lease_seconds
        if lease_seconds is not None:
            lease = min(lease_seconds, MAX_LEASE_S)  # a hub's whim never overflows a date
        found = await subscriptions.verified(subscription_id, topic, float(lease))
    else:
        found = await subscriptions.unsubscribed(subscription_id, topic)
    return PlainTextResponse(challenge if found else "", status_code=200 if found else 404)


@router.post(PATH, status_code=202, responses={410: {}, 413: {}})
async def notification(request: Request, subscription_id: UUID) -> Response:
    """A notification: 202 (kept for the poller, or ignored when its signature does not
    hold), 410 when the subscription is gone."""
    subscriptions = WebSubRepository(context_of(request).db)
    subscription = await subscriptions.get(subscription_id)
    if subscription is None or subscription.state == WebSubState.UNSUBSCRIBING:
        return Response(status_code=410)
    body = await request.body()  # capped by the BodyLimit middleware
    problem = signature_problem(request.headers.get("X-Hub-Signature"), body, subscription.secret)
    if problem is not None:
        await subscriptions.bad_signature(subscription_id, problem)
        log.warning("WebSub notification for %s ignored: %s", subscription.topic, problem)
        return Response(status_code=202)
    await subscriptions.notified(subscription_id, request.headers.get("Content-Type"), body)
    return Response(status_code=202)
