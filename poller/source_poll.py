"""Poll one claimed source (through its kind and/or its sitemaps) and apply what was
found: submit entries to the frontier, move a redirected feed URL, disable a gone source.
The new `PollState` and the `fetch_log` rows are returned for the caller to write in a
batch."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from frontier.fetch_log import LogEntry
from frontier.parse_pool import ParsePool
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate
from frontier.safe_http.client import SafeClient
from frontier.source_kinds import KindRegistry, parse_options
from frontier.sources import Source
from frontier.states import FetchKind, LogOutcome, Origin
from frontier.urls import InvalidURL
from frontier.websub import WebSubRepository
from poller import websub
from poller.entries import Entry
from poller.policy import PollPolicy
from poller.poll import KindOutcome, poll_kind
from poller.poll_state import PollState, PollStateRepository
from poller.poll_summary import PartOutcome, PollSummary
from poller.sitemaps import SitemapOutcome, poll_sitemaps


@dataclass(slots=True)
class Polled:
    """What polling one source produced."""

    source: Source
    state: PollState
    kind: KindOutcome | None = None  # the part polled through the source's kind
    sitemap: SitemapOutcome | None = None
    logs: list[LogEntry] = field(default_factory=list)
    crash: str | None = None  # an unexpected error; the lease is released, not written

    @property
    def parts(self) -> list[PartOutcome]:
        return [p for p in (self.kind, self.sitemap) if p is not None]

    @property
    def ok(self) -> bool:
        return self.crash is None and not any(p.failed for p in self.parts)

    @property
    def entries(self) -> list[Entry]:
        return self.kind.entries if self.kind else []

    def summary(self) -> PollSummary:
        parts = self.parts
        errors = [p.error for p in parts if p.error]
        if self.crash:
            errors.append(self.crash)
        url = next((p.url for p in parts if p.url), None)
        return PollSummary(
            source=self.source.name,
            url=url or self.source.feed_url or self.source.base_url or self.source.sitemap_url,
            ok=self.ok,
            error="; ".join(errors) or None,
            items_seen=sum(p.items_seen for p in parts),
            items_new=sum(p.items_new for p in parts),
            outcome=",".join(str(p.outcome) for p in parts if p.outcome) or "skipped",
            elapsed_ms=sum(p.elapsed_ms for p in parts),
        )


async def poll_source(
    db_queue: QueueRepository,
    states: PollStateRepository,
    client: SafeClient,
    policy: PollPolicy,
    source: Source,
    state: PollState,
    *,
    now: datetime,
    kind: bool,
    sitemap: bool,
    kinds: KindRegistry,
    parser: ParsePool,
    dry_run: bool = False,
    subscriptions: WebSubRepository | None = None,
) -> Polled:
    """`subscriptions`: where a feed's WebSub subscription is kept (None: WebSub is not
    looked at, as in a manual fire)."""
    polled = Polled(source, state)
    if kind:
        polled.kind = await poll_kind(
            client,
            source,
            polled.state,
            policy,
            now=now,
            kinds=kinds,
            parser=parser,
            conditional=not dry_run,
        )
        polled.state = polled.kind.state
    if sitemap:
        polled.sitemap = await poll_sitemaps(
            client,
            source,
            polled.state,
            policy,
            now=now,
            parser=parser,
            kind_target=_kind_target(kinds, source),
        )
        polled.state = polled.sitemap.state
    if dry_run:
        return polled
    if polled.kind is not None:
        read = polled.kind.outcome is LogOutcome.OK  # a document read (before submitting)
        await _apply_kind(db_queue, states, polled.kind, now)
        polled.state = replace(polled.state, **_kind_fields(polled.kind))
        if subscriptions is not None and policy.websub.enabled:
            polled.state = await websub.after_poll(
                subscriptions, policy.websub, polled.kind, polled.state, read=read, now=now
            )
    if polled.sitemap is not None:
        await _apply_sitemap(db_queue, polled.sitemap, now)
    polled.logs = [
        _log(fetch_kind, part)
        # the kind's part keeps the fetch_log kind `feed` (a stored value) whatever its kind
        for fetch_kind, part in (
            (FetchKind.FEED, polled.kind),
            (FetchKind.SITEMAP, polled.sitemap),
        )
        if part is not None and part.outcome is not None and part.url
    ]
    return polled


def _kind_target(kinds: KindRegistry, source: Source) -> str | None:
    """The URL the source's kind polls (None: a kind not installed or misconfigured,
    which `poll_kind` reports)."""
    kind = kinds.get(source.kind)
    if kind is None:
        return None
    try:
        target: str | None = kind.target(source, parse_options(kind, source.config or {}))
    except (ValidationError, InvalidURL):
        return None
    return target


def _kind_fields(outcome: KindOutcome) -> dict[str, Any]:
    values: dict[str, Any] = {"last_outcome": str(outcome.outcome) if outcome.outcome else None}
    if outcome.new_feed_url:
        values["feed_url"] = outcome.new_feed_url
    return values


async def _apply_kind(
    queue: QueueRepository, states: PollStateRepository, outcome: KindOutcome, now: datetime
) -> None:
    source = outcome.source
    if outcome.new_feed_url and outcome.new_feed_url != source.feed_url:
        await states.set_feed_url(source.id, outcome.new_feed_url)
    if outcome.disable_reason:
        await states.disable(source.id, outcome.disable_reason, now=now)
    if outcome.outcome is LogOutcome.OK:
        outcome.items_new = await submit_entries(
            queue, source, outcome.origin, outcome.entries, outcome.url, now
        )
        if not outcome.items_new:
            outcome.outcome = LogOutcome.OK_NO_NEW


async def submit_entries(
    queue: QueueRepository,
    source: Source,
    origin: Origin,
    entries: list[Entry],
    base: str | None,
    now: datetime,
) -> int:
    """Submit the entries of `source`'s feed (a poll's or a WebSub notification's), their
    URLs resolved against `base`; returns how many were new to the frontier."""
    candidates = [
        Candidate(entry.url, source.ref, origin, discovery_meta=entry.as_meta(), base=base)
        for entry in entries
    ]
    result = await queue.submit(candidates, now=now) if candidates else None
    return result.inserted if result else 0


async def _apply_sitemap(queue: QueueRepository, outcome: SitemapOutcome, now: datetime) -> None:
    if outcome.outcome is not LogOutcome.OK:
        return
    source = outcome.source
    candidates = [
        Candidate(
            item.loc,
            source.ref,
            Origin.SITEMAP,
            discovery_meta=item.as_meta() or None,
            base=outcome.url,
        )
        for item in outcome.urls
    ]
    inserted = 0
    for start in range(0, len(candidates), 5_000):
        result = await queue.submit(candidates[start : start + 5_000], now=now)
        inserted += result.inserted
    outcome.items_new = inserted
    if not inserted:
        outcome.outcome = LogOutcome.OK_NO_NEW


def _log(kind: FetchKind, part: PartOutcome) -> LogEntry:
    assert part.outcome is not None and part.url is not None
    return LogEntry(
        kind,
        part.source.id,
        part.url,
        part.outcome,
        http_status=part.http_status,
        items_seen=part.items_seen,
        items_new=part.items_new,
        elapsed_ms=part.elapsed_ms,
        error=part.error,
    )
