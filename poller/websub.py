"""WebSub subscriptions (W3C WebSub, sections 4 to 6): what a poll learns of a feed's hub,
and the requests the poller sends to hubs. Off unless FRONTIER_PUBLIC_URL is set (the
hub must reach the API's callback there: frontier.api.routes.websub).

- `after_poll`: a feed read that declares a hub (its `Link` header or the feed's own
  `<link rel="hub">`, with `rel="self"` as the topic: poller.feed_parse) keeps or asks a
  subscription; a feed read that declares none has its subscription unsubscribed. While
  the subscription is active the feed is still polled, at the fallback interval
  (FRONTIER_WEBSUB_POLL_MINUTES, or the feed's own if longer).
- `send_requests`: the subscriptions with a request due (new, renewal before the lease
  ends, unsubscription of a removed or disabled source, a request never verified) are
  POSTed to their hubs through the safe client (the SSRF guard judges a hub like any
  URL). The hub then verifies the intent at the callback, which makes the subscription
  active (or removes it, or records a denial).

The secret is sent to the hub only, in the request's body; it is never logged.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from frontier.safe_http.client import SafeClient
from frontier.safe_http.errors import HttpError
from frontier.websub import Subscription, WebSubRepository, callback_url
from poller import intervals
from poller.policy import WebSubPolicy
from poller.poll import KindOutcome, interval_of
from poller.poll_state import PollState

log = logging.getLogger(__name__)

ACCEPTED = (200, 202, 204)  # 202 Accepted is the recommendation's; some hubs answer 204


async def after_poll(
    subscriptions: WebSubRepository,
    policy: WebSubPolicy,
    outcome: KindOutcome,
    state: PollState,
    *,
    read: bool,
    now: datetime,
) -> PollState:
    """Keep the source's subscription in step with what its feed declares (`read`: the
    poll read a document; a 304 or a failure says nothing), and move its next poll to the
    fallback interval while the subscription is active."""
    source = outcome.source
    if read:
        hub, topic = outcome.websub or (None, None)
        if hub and topic and hub.startswith(("http://", "https://")):
            if await subscriptions.declared(source.id, hub, topic):
                log.info("source %s: its feed declares the WebSub hub %s", source.name, hub)
        else:
            await subscriptions.undeclared(source.id)
    if not await subscriptions.active_sources([source.id], now):
        return state
    fallback = max(policy.poll_s, interval_of(source, state))
    later = intervals.next_poll_ok(now, source.id, fallback)
    current = state.next_poll_at
    if current is not None and current.tzinfo is not None and current >= later:
        return state  # already later (a failure's backoff)
    return replace(state, next_poll_at=later)


async def send_requests(
    subscriptions: WebSubRepository,
    client: SafeClient,
    policy: WebSubPolicy,
    *,
    now: datetime | None = None,
) -> int:
    """Send the requests due to their hubs; returns how many were sent."""
    assert policy.public_url is not None
    await subscriptions.orphaned()
    due = await subscriptions.take_due(
        policy.batch, renew_before_s=policy.renew_before_s, retry_s=policy.retry_s, now=now
    )
    for subscription in due:
        await _request(subscriptions, client, policy, subscription)
    return len(due)


async def _request(
    subscriptions: WebSubRepository,
    client: SafeClient,
    policy: WebSubPolicy,
    subscription: Subscription,
) -> None:
    assert policy.public_url is not None
    unsubscribe = subscription.state == "unsubscribing"
    form = {
        "hub.callback": callback_url(policy.public_url, subscription.id),
        "hub.mode": "unsubscribe" if unsubscribe else "subscribe",
        "hub.topic": subscription.topic,
    }
    if not unsubscribe:
        form["hub.lease_seconds"] = str(policy.lease_s)
        form["hub.secret"] = subscription.secret
    try:
        response = await client.post_form(subscription.hub, form)
    except HttpError as exc:  # the guard refused the hub, or it did not answer
        await subscriptions.request_failed(subscription.id, f"{form['hub.mode']}: {exc}")
        log.warning("WebSub %s of %s failed: %s", form["hub.mode"], subscription.topic, exc)
        return
    if response.status in ACCEPTED:
        return  # the hub verifies the intent at the callback
    error = f"{form['hub.mode']}: the hub answered HTTP {response.status}"
    detail = response.body[:200].decode("utf-8", "replace").strip()
    if detail:
        error += f": {detail}"
    if unsubscribe and 400 <= response.status < 500:
        await subscriptions.forget(subscription.id)  # the hub will not: nothing to undo
        return
    await subscriptions.request_failed(subscription.id, error)
    log.warning("WebSub %s at %s: %s", subscription.topic, subscription.hub, error)
