"""Fire one source now, from the CLI (`frontier poll --source NAME [--dry-run]`) or the
API (`POST /api/v1/sources/{id}/fire`).

A dry run fetches (without conditional headers, so the entries show) and parses, and
writes nothing; it is not rate limited. A real fire polls the source as the scheduler would
and is rate limited per source (`FIRE_RATE_LIMIT_S`) through `feed_state.last_fired_at`
in the database, so the limit holds across processes; it also takes the source's poll
lease, so it never runs alongside a scheduled poll of the same source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from frontier.clock import utcnow
from frontier.db import Database
from frontier.fetch_log import FetchLogRepository
from frontier.parse_pool import ParsePool
from frontier.queue import QueueRepository
from frontier.safe_http.client import SafeClient
from frontier.source_kinds import DEFAULT_KIND, KindRegistry, load_kinds
from frontier.sources import UnknownSource
from poller.entries import Entry
from poller.errors import FireRateLimited, PollerError, SourceBusy
from poller.policy import PollPolicy
from poller.poll_state import PollStateRepository
from poller.scheduler import worker_id
from poller.source_poll import poll_source

__all__ = ["FireRateLimited", "FireResult", "PollerError", "SourceBusy", "fire_source"]


@dataclass(slots=True)
class FireResult:
    source: str
    dry_run: bool
    entries: list[Entry] = field(default_factory=list)
    items_seen: int = 0
    items_new: int = 0
    error: str | None = None
    outcome: str | None = None
    url: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "dry_run": self.dry_run,
            "url": self.url,
            "outcome": self.outcome,
            "entries": [entry.as_json() for entry in self.entries],
            "items_seen": self.items_seen,
            "items_new": 0 if self.dry_run else self.items_new,
            "error": self.error,
        }


async def fire_source(
    db: Database,
    client: SafeClient,
    source_id: UUID,
    *,
    dry_run: bool,
    now: datetime | None = None,
    policy: PollPolicy | None = None,
    queue: QueueRepository | None = None,
    kinds: KindRegistry | None = None,
    parser: ParsePool | None = None,
) -> FireResult:
    """Poll source `source_id` now; `UnknownSource` if there is none, `FireRateLimited`
    (or its `SourceBusy`) if a real fire came too soon or a poll holds the source."""
    policy = policy or PollPolicy()
    states = PollStateRepository(db)
    found = await states.get(source_id)
    if found is None:
        raise UnknownSource(f"no source with id {source_id}")
    source, state = found
    own_kind = source.kind != DEFAULT_KIND  # polled through its kind, whatever its URLs
    if not (source.feed_url or source.base_url or source.sitemap_url or own_kind):
        raise UnknownSource(f"source {source.name!r} has no feed, site or sitemap to poll")
    at = now or utcnow()
    owner = worker_id("fire")
    if not dry_run:
        ticket = await states.fire_claim(
            source_id, owner, rate_s=policy.fire_rate_limit_s, lease_s=policy.lease_s, now=now
        )
        assert ticket is not None
        if not ticket.claimed:
            _refuse(source.name, ticket.last_fired_at, ticket.lease_until, ticket.now, policy)
        found = await states.get(source_id)
        assert found is not None
        source, state = found
    through_kind = bool(source.feed_url or source.base_url) or own_kind
    polled = await poll_source(
        queue or QueueRepository(db),
        states,
        client,
        policy,
        source,
        state,
        now=at,
        kind=through_kind,
        sitemap=not through_kind,
        kinds=kinds if kinds is not None else load_kinds(),
        parser=parser or ParsePool(policy.parse),
        dry_run=dry_run,
    )
    if not dry_run:
        await states.complete(owner, [polled.state])
        await FetchLogRepository(db).record(polled.logs)
    summary = polled.summary()
    if not dry_run:
        summary.log()  # a fire is a poll: its line, as the scheduler's polls have
    sitemap_entries = polled.sitemap.urls if polled.sitemap else []
    entries = polled.entries or [
        Entry(u.loc, title=u.news_title, published_at=u.modified_at) for u in sitemap_entries
    ]
    return FireResult(
        source=source.name,
        dry_run=dry_run,
        entries=entries,
        items_seen=summary.items_seen,
        items_new=summary.items_new,
        error=summary.error,
        outcome=summary.outcome,
        url=summary.url,
    )


def _refuse(
    name: str,
    last_fired: datetime | None,
    lease_until: datetime | None,
    now: datetime,
    policy: PollPolicy,
) -> None:
    if last_fired is not None:
        wait = policy.fire_rate_limit_s - (now - last_fired).total_seconds()
        if wait > 0:
            raise FireRateLimited(
                f"source {name!r} was fired {int(policy.fire_rate_limit_s - wait)} s ago; "
                f"try again in {wait:.0f} s",
                retry_after_s=wait,
            )
    busy = (lease_until - now).total_seconds() if lease_until else 1.0
    raise SourceBusy(
        f"source {name!r} is being polled right now; try again shortly",
        retry_after_s=max(1.0, min(busy, policy.lease_s)),
    )
