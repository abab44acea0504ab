"""Poll one source through its kind: conditional GET, parse, filter, and decide the next
poll.

`poll_kind` looks the source's `kind` up in the registry it is given (`feed` by default;
`poller.kinds` is the interface), lets the kind fetch and parse, and returns a
`KindOutcome` — the entries to submit, the source's new `PollState`, what to log —
without writing anything, so a dry run is the same call with the outcome thrown away.
The scheduler and `fire` apply it. The cursor (ETag, Last-Modified, `feed_cursor_at`)
never advances on a failed poll.

A kind that is not installed, or a stored config its kind refuses, is a configuration
error of that source alone: no request, no fetch-log row, the error kept on the source
(`feed_state.last_error`, shown by `frontier sources` and the API) and the source tried
again after the failure backoff.

An entry with no date (neither published nor updated) is dated when it is first seen:
the poll's time, kept in its `discovery_meta` (a URL already queued is not rewritten).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from pydantic import ValidationError

from frontier.parse_pool import ParsePool
from frontier.proxies import PROXY_RETRY_S, route_for
from frontier.safe_http.client import SafeClient
from frontier.safe_http.errors import HttpError
from frontier.source_credentials import CredentialsUnavailable, credentials_for
from frontier.source_kinds import DEFAULT_KIND, KindRegistry, parse_options
from frontier.sources import Source
from frontier.states import LogOutcome, Origin
from poller import intervals
from poller.entries import Entry
from poller.feed_discovery import discover_feed
from poller.filters import EntryFilter, poll_seed
from poller.kinds import KindRequest, SourceKind
from poller.policy import PollPolicy
from poller.poll_state import PollState
from poller.poll_summary import POLL_FAILURES, SUCCEEDED, PartOutcome
from poller.responses import Verdict, decide

log = logging.getLogger(__name__)


@dataclass(slots=True)
class KindOutcome(PartOutcome):
    """The part polled through the source's kind (`url`: the kind's URL)."""

    entries: list[Entry] = field(default_factory=list)
    new_feed_url: str | None = None  # discovery or a permanent redirect moved the feed
    disable_reason: str | None = None  # 410 Gone
    origin: Origin = Origin.FEED  # what the kind's URLs are submitted as
    misconfigured: bool = False  # a configuration error: nothing was requested or logged
    websub: tuple[str, str] | None = None  # the WebSub (hub, topic) a document read declared

    @property
    def failed(self) -> bool:
        return self.misconfigured or (self.outcome is not None and self.outcome not in SUCCEEDED)


def interval_of(source: Source, state: PollState) -> float:
    """The interval the source is polled at: adaptive when enabled and computed."""
    configured = source.feed_poll_interval_minutes * 60.0
    if state.adaptive_interval and state.interval_s:
        return float(state.interval_s)
    return configured


async def poll_kind(
    client: SafeClient,
    source: Source,
    state: PollState,
    policy: PollPolicy,
    *,
    now: datetime,
    kinds: KindRegistry,
    parser: ParsePool,
    conditional: bool = True,
) -> KindOutcome:
    started = time.monotonic()
    interval = interval_of(source, state)
    kind = kinds.get(source.kind)
    if kind is None:
        return _misconfigured(source, state, now, interval, f"kind: {kinds.missing(source.kind)}")
    try:
        options = parse_options(kind, source.config or {})
    except ValidationError as exc:
        reasons = "; ".join(
            f"config.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        return _misconfigured(source, state, now, interval, reasons)
    try:
        credentials_for(source)  # its secrets are readable (each request reads them again)
    except CredentialsUnavailable as exc:
        return _misconfigured(source, state, now, interval, f"access: {exc}")
    try:
        route_for(source)
    except CredentialsUnavailable as exc:
        return _misconfigured(source, state, now, interval, f"proxy: {exc}")
    url = kind.target(source, options)
    new_feed_url = None
    if not url:
        if not source.base_url or kind.name != DEFAULT_KIND:  # nothing to poll here
            later = replace(state, next_poll_at=now + timedelta(seconds=interval))
            return KindOutcome(source, later, None, None)
        recent = state.discovery_attempted_at and now - state.discovery_attempted_at < timedelta(
            seconds=policy.discovery_retry_s
        )
        found = (
            None
            if recent
            else await discover_feed(
                client,
                parser,
                source.base_url,
                source.fetchprotection,
                credentials_for(source),
                route_for(source),
            )
        )
        if found is None:
            if not recent:
                log.warning("source %s: no feed found at %s; skipped", source.name, source.base_url)
            later = replace(
                state,
                discovery_attempted_at=now if not recent else state.discovery_attempted_at,
                next_poll_at=now + timedelta(seconds=policy.discovery_retry_s),
                last_error=f"no feed found at {source.base_url}",
            )
            return KindOutcome(source, later, None, None, error=later.last_error)
        url = new_feed_url = found
    outcome = KindOutcome(
        source, state, url, LogOutcome.FAILED, new_feed_url=new_feed_url, origin=kind.origin
    )
    request = KindRequest(
        source,
        options,
        client,
        parser,
        url,
        etag=state.last_etag if conditional else None,
        last_modified=state.last_modified if conditional else None,
        body_digest=state.last_body_digest if conditional else None,
        max_body_bytes=policy.max_document_bytes,
        budget=policy.poll_budget(),
        retry=policy.retry,
    )
    try:
        await _fetch(kind, request, outcome, policy, now=now)
    except POLL_FAILURES as exc:
        outcome.ended_by(exc, kind.name)
        unusable = not isinstance(exc, HttpError)  # a body it was given but could not use
        if unusable and request.answered and outcome.http_status is None:
            outcome.http_status = request.answered[0].status
    outcome.elapsed_ms = int((time.monotonic() - started) * 1000)
    if outcome.failed:
        _failed(outcome, interval, now, policy)
    return outcome


def _misconfigured(
    source: Source, state: PollState, now: datetime, interval: float, error: str
) -> KindOutcome:
    """A configuration error: nothing requested, nothing logged, the error kept on the
    source and the next attempt after the failure backoff (a plugin may be installed)."""
    log.error("source %s: %s", source.name, error)
    errors = state.consecutive_errors + 1
    later = replace(
        state,
        last_error=error,
        consecutive_errors=errors,
        next_poll_at=intervals.next_poll_failed(now, interval, errors),
    )
    return KindOutcome(source, later, None, None, error=error, misconfigured=True)


async def _fetch(
    kind: SourceKind,
    request: KindRequest,
    outcome: KindOutcome,
    policy: PollPolicy,
    *,
    now: datetime,
) -> None:
    source, state = outcome.source, outcome.state
    result = await kind.poll(request)
    response = result.response
    outcome.http_status = response.status
    decision = decide(
        response.status, response.headers, now, redirected_to=response.permanent_redirect_to
    )
    if response.permanent_redirect_to and kind.name == DEFAULT_KIND:
        outcome.new_feed_url = decision.moved_to  # else keep what discovery found, if any
    interval = interval_of(source, state)
    if request.unchanged(response):
        outcome.outcome = LogOutcome.NOT_MODIFIED
        outcome.state = replace(
            state,
            last_polled_at=now,
            last_etag=response.headers.get("ETag") or state.last_etag,
            last_modified=response.headers.get("Last-Modified") or state.last_modified,
            consecutive_errors=0,
            last_error=None,
            last_outcome=str(LogOutcome.NOT_MODIFIED),
            next_poll_at=intervals.next_poll_ok(now, source.id, interval, spread=state.spread),
        )
        return
    if decision.failed:
        outcome.outcome, outcome.error = decision.outcome, decision.error
        outcome.retry_after_s = decision.retry_after_s
        if decision.verdict is Verdict.GONE:
            outcome.error = f"{decision.error}: source disabled"
            outcome.disable_reason = f"{kind.name} {outcome.url} answered 410 Gone"
        return
    outcome.items_seen = result.items_seen
    outcome.error = result.error()
    outcome.entries = kept_entries(source, result.entries, now, state.last_polled_at)
    outcome.websub = result.websub
    floor = intervals.interval_floor_s(result.ttl, response.headers)
    interval_s = state.interval_s
    if state.adaptive_interval:
        adaptive = intervals.adaptive_interval_s((e.published_at for e in result.entries), floor)
        interval_s = int(adaptive) if adaptive else interval_s
        interval = float(interval_s) if interval_s else interval
    outcome.outcome = LogOutcome.OK  # OK or OK_NO_NEW once submitted
    outcome.state = replace(
        state,
        feed_url=outcome.new_feed_url or state.feed_url or outcome.url,
        last_polled_at=now,
        last_etag=response.headers.get("ETag"),
        last_modified=response.headers.get("Last-Modified"),
        last_item_count=result.items_seen,
        last_body_digest=request.digest(response),
        consecutive_errors=0,
        last_error=outcome.error,
        next_poll_at=intervals.next_poll_ok(now, source.id, interval, spread=state.spread),
        interval_s=interval_s,
        min_interval_s=floor,
        feed_cursor_at=now,
    )


def kept_entries(
    source: Source, entries: list[Entry], now: datetime, last_polled_at: datetime | None
) -> list[Entry]:
    """What a poll of `source` (or a WebSub notification of its feed) submits of `entries`:
    those its filters keep (`DocumentRefused` names a bad option), an undated one dated
    `now`."""
    entry_filter = EntryFilter.from_source(source.url_filters, source.min_published_at)
    kept = entry_filter.apply(entries, seed=poll_seed(source.id, last_polled_at))
    return [e if e.published_at else replace(e, published_at=now) for e in kept]


def _failed(outcome: KindOutcome, interval: float, now: datetime, policy: PollPolicy) -> None:
    state = outcome.state
    if outcome.proxy_failed:  # the proxy's failure: not the source's, nor its feed's host's
        outcome.state = replace(
            state,
            last_error=outcome.error,
            last_outcome=str(outcome.outcome),
            next_poll_at=now + timedelta(seconds=PROXY_RETRY_S),
        )
        return
    errors = state.consecutive_errors + 1
    if errors >= policy.error_log_threshold:  # each failure has its line (PollSummary.log)
        log.error(
            "poll failed %d times in a row: %s (source %s)",
            errors,
            outcome.error,
            outcome.source.name,
        )
    outcome.state = replace(
        state,
        last_polled_at=now,
        consecutive_errors=errors,
        last_error=outcome.error,
        last_outcome=str(outcome.outcome),
        next_poll_at=intervals.next_poll_failed(now, interval, errors, outcome.retry_after_s),
    )
