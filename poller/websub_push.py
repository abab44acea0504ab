"""The poller's WebSub loop: send the requests due to hubs (poller.websub) and apply the
notifications the API's callback kept (frontier.websub).

A notification is the feed the hub pushed, stored by the callback once its signature
held. It is parsed here, in the poller's parse pool (never on an event loop that serves
anything else), its entries go through the same filters as a poll of that source and are
submitted at once through the normal submit path; the subscription's `last_notified_at`
recorded when it arrived. Each notification is leased while it is applied and deleted
once submitted, so a poller that dies on the way leaves it for the next.

`WebSubLoop.run_once()` does one look (tests call it); `run_forever()` looks on every
NOTIFY `frontier_websub` (the callback sends one per notification) and every
`tick_s` otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from datetime import datetime

from frontier.clock import utcnow
from frontier.db import Database
from frontier.errors import DatabaseUnavailable
from frontier.listen import first_of, listen
from frontier.parse_pool import ParseLimitExceeded, ParsePool
from frontier.queue import QueueRepository
from frontier.queue_values import QueuePolicy
from frontier.safe_http.client import SafeClient
from frontier.sources import SourceRepository, UnknownSource
from frontier.states import Origin
from frontier.websub import NOTIFY_CHANNEL, Notification, WebSubRepository
from poller.errors import DocumentRefused
from poller.feed_parse import ParsedFeed, parse_feeds
from poller.policy import PollPolicy
from poller.poll import kept_entries
from poller.source_poll import submit_entries
from poller.websub import send_requests

log = logging.getLogger(__name__)


@dataclass(slots=True)
class PushSummary:
    requests: int = 0  # sent to hubs
    notifications: int = 0  # applied (refused ones included)
    refused: int = 0  # not a usable feed, over a parse limit, or of a source now gone
    submitted: int = 0  # URLs new to the frontier


class WebSubLoop:
    def __init__(
        self,
        db: Database,
        client: SafeClient,
        policy: PollPolicy,
        queue_policy: QueuePolicy | None,
        parser: ParsePool,
    ) -> None:
        self.db = db
        self.client = client
        self.policy = policy
        self.parser = parser
        self.subscriptions = WebSubRepository(db)
        self.queue = QueueRepository(db, queue_policy)
        self.sources = SourceRepository(db)

    async def run_once(self, *, now: datetime | None = None) -> PushSummary:
        """Send the requests due, then apply every notification waiting."""
        summary = PushSummary()
        while True:  # every request due, a batch at a time
            sent = await send_requests(self.subscriptions, self.client, self.policy.websub, now=now)
            summary.requests += sent
            if sent < self.policy.websub.batch:
                break
        while True:
            taken = await self.subscriptions.take_notifications(
                self.policy.websub.batch, lease_s=self.policy.lease_s
            )
            await self._apply(taken, summary, now or utcnow())
            await self.subscriptions.applied([n.id for n in taken])
            summary.notifications += len(taken)
            if len(taken) < self.policy.websub.batch:
                return summary

    async def _apply(self, taken: list[Notification], summary: PushSummary, now: datetime) -> None:
        """Parse the notifications in one job of the parse pool (one process, not one
        each; over a limit, each in its own so that one hostile body spoils no other), then
        submit what each source's filters keep."""
        documents = [(n.body, {"Content-Type": n.content_type or ""}, n.topic) for n in taken]
        try:
            parsed = await self.parser.run(parse_feeds, documents)
        except ParseLimitExceeded:
            parsed = list(await asyncio.gather(*(self._parse_alone(d) for d in documents)))
        submits = []
        for notification, feed in zip(taken, parsed, strict=True):
            try:
                if isinstance(feed, str):
                    raise DocumentRefused(feed)
                source = await self.sources.get_by_id(notification.source_id)
                if not source.enabled:
                    raise UnknownSource(f"source {source.name} is disabled")
                entries = kept_entries(source, feed.entries, now, None)
            except (DocumentRefused, UnknownSource) as exc:
                summary.refused += 1
                log.warning("WebSub notification of %s ignored: %s", notification.topic, exc)
                continue
            submits.append(
                submit_entries(self.queue, source, Origin.FEED, entries, notification.topic, now)
            )
        summary.submitted += sum(await asyncio.gather(*submits))

    async def _parse_alone(self, document: tuple[bytes, dict[str, str], str]) -> ParsedFeed | str:
        try:
            [parsed] = await self.parser.run(parse_feeds, [document])
        except ParseLimitExceeded as exc:
            return str(exc)
        return parsed

    async def run_forever(self, stop: asyncio.Event) -> None:
        """Look on every NOTIFY frontier_websub and every `tick_s` until `stop`; a look
        that fails is logged and the next one comes as usual."""
        wake = asyncio.Event()
        listening = asyncio.create_task(listen(self.db, wake, stop, NOTIFY_CHANNEL))
        try:
            while not stop.is_set():
                wake.clear()
                try:
                    done = await self.run_once()
                    if done.notifications or done.requests:
                        log.info(
                            "WebSub: %d requests sent, %d notifications (%d refused), %d new URLs",
                            done.requests,
                            done.notifications,
                            done.refused,
                            done.submitted,
                        )
                except DatabaseUnavailable:  # reported once by the database's outage
                    pass
                except Exception:  # a surprise: logged, and the next look comes as usual
                    log.exception("WebSub look failed")
                await first_of([], [wake, stop], self.policy.websub.tick_s)
        finally:
            listening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listening
