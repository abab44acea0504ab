"""Poll one source's sitemaps, on their own interval.

Where: the source's `sitemap_url`; else the location found before; else robots.txt
`Sitemap:` lines of the site; else the well-known paths. Every robots.txt `Sitemap:`
line is a URL from outside: it goes through `frontier.urls.normalize_url` (an unusable
one is logged and dropped), and the robots.txt is parsed in a parse process. The top
sitemap is requested conditionally (its stored validators); from it the tree is read by
`poller.sitemap_walk` (the walk the `sitemap` kind uses too) within `max_sitemap_depth`,
`max_sitemap_files`, `max_sitemap_bytes` a file and the poll's budget
(`PollPolicy.poll_budget`). Only URLs modified within the window (or since the last
successful poll, if that is longer ago) are kept; URLs without a date are kept. What
was skipped is named in the poll's error. Like `poll_kind`, nothing is written here.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from urllib.parse import urljoin

from frontier.parse_pool import ParseLimitExceeded, ParsePool
from frontier.proxies import PROXY_RETRY_S, route_for
from frontier.safe_http.client import SafeClient
from frontier.safe_http.errors import HttpError
from frontier.safe_http.responses import Response
from frontier.source_credentials import credentials_for
from frontier.source_kinds import DEFAULT_KIND
from frontier.sources import Source
from frontier.states import LogOutcome
from frontier.urls import InvalidURL, normalize_url
from poller import intervals
from poller.errors import DocumentRefused
from poller.kinds import problems_text
from poller.policy import PollPolicy
from poller.poll_state import PollState
from poller.poll_summary import POLL_FAILURES, PartOutcome
from poller.responses import Verdict, decide
from poller.sitemap_parse import SitemapUrl, parse_sitemap, sitemaps_in_robots
from poller.sitemap_walk import WalkLimits, identity, request_url, walk_sitemaps

log = logging.getLogger(__name__)

WELL_KNOWN = ("/sitemap.xml", "/sitemap_index.xml", "/news-sitemap.xml", "/sitemap_news.xml")
CURSOR_MARGIN = timedelta(hours=1)  # overlap with the previous poll's window


@dataclass(slots=True)
class SitemapOutcome(PartOutcome):
    """The source's own sitemaps (`url`: the top sitemap polled)."""

    urls: list[SitemapUrl] = field(default_factory=list)


def cutoff_of(state: PollState, now: datetime, window_s: float) -> datetime:
    """URLs modified before this are skipped: the window, widened back to the last
    successful poll after an outage so nothing published meanwhile is lost."""
    cutoff = now - timedelta(seconds=window_s)
    if state.sitemap_cursor_at is not None:
        cutoff = min(cutoff, state.sitemap_cursor_at - CURSOR_MARGIN)
    return cutoff


async def poll_sitemaps(
    client: SafeClient,
    source: Source,
    state: PollState,
    policy: PollPolicy,
    *,
    now: datetime,
    parser: ParsePool,
    kind_target: str | None = None,
) -> SitemapOutcome:
    """`kind_target`: what the source's kind polls (`SourceKind.target`); a `sitemap_url`
    of that identity is the kind's own document, already read this poll, and is not read
    again here (a `sitemap`-kind source polls its `sitemap_url` by default)."""
    started = time.monotonic()
    later = now + timedelta(seconds=policy.sitemap_interval_s)
    site = source.base_url or source.sitemap_url
    if (not source.sitemap_url and (not source.base_url or source.kind != DEFAULT_KIND)) or (
        source.sitemap_url and kind_target and identity(source.sitemap_url) == identity(kind_target)
    ):
        # a source of another kind uses its base_url for that kind: its sitemaps are
        # looked for only when it names one, and one its kind polls is not polled twice
        return SitemapOutcome(source, replace(state, sitemap_next_poll_at=later), None, None)
    outcome = SitemapOutcome(source, state, None, LogOutcome.FAILED)
    try:
        locations = await _locations(client, parser, source, state, site or "")
        if not locations:
            outcome.outcome = None
            outcome.state = replace(
                state, sitemap_next_poll_at=later, sitemap_last_error="no sitemap found"
            )
            return outcome
        outcome.url = locations[0]
        await _read(client, parser, outcome, locations, policy, now=now)
    except POLL_FAILURES as exc:
        outcome.ended_by(exc, "sitemap")
    outcome.elapsed_ms = int((time.monotonic() - started) * 1000)
    if outcome.failed and outcome.proxy_failed:  # the proxy's failure, not the source's
        outcome.state = replace(
            state,
            sitemap_last_error=outcome.error,
            sitemap_next_poll_at=now + timedelta(seconds=PROXY_RETRY_S),
        )
    elif outcome.failed:
        errors = state.sitemap_consecutive_errors + 1
        if errors >= policy.error_log_threshold:  # each failure has its line (PollSummary)
            log.error(
                "sitemap poll failed %d times in a row: %s (source %s)",
                errors,
                outcome.error,
                source.name,
            )
        outcome.state = replace(
            state,
            sitemap_consecutive_errors=errors,
            sitemap_last_error=outcome.error,
            sitemap_location=None if not source.sitemap_url else state.sitemap_location,
            sitemap_next_poll_at=intervals.next_poll_failed(
                now, policy.sitemap_interval_s, errors, outcome.retry_after_s
            ),
        )
    return outcome


async def _locations(
    client: SafeClient, parser: ParsePool, source: Source, state: PollState, site: str
) -> list[str]:
    if source.sitemap_url:
        return [source.sitemap_url]
    if state.sitemap_location:
        return [state.sitemap_location]
    robots_url = urljoin(site, "/robots.txt")
    try:
        robots = await client.get(
            robots_url,
            fetchprotection=source.fetchprotection,
            politeness_key=source.politeness_key,
            max_body_bytes=512 * 1024,
            credentials=credentials_for(source),
            proxy=route_for(source),
        )
        if robots.status == 200:
            text = robots.body.decode("utf-8", "replace")
            found = _requestable(source, await parser.run(sitemaps_in_robots, text))
            if found:
                return found
    except ParseLimitExceeded as exc:
        log.info("source %s: robots.txt unusable: %s", source.name, exc)
    except HttpError as exc:
        log.info("source %s: robots.txt unreachable: %s", source.name, exc)
    for path in WELL_KNOWN:
        candidate = urljoin(site, path)
        try:
            response = await client.get(
                candidate,
                fetchprotection=source.fetchprotection,
                politeness_key=source.politeness_key,
                credentials=credentials_for(source),
                proxy=route_for(source),
            )
            if response.status == 200:
                await parser.run(parse_sitemap, response.body)
                return [response.url]
        except (HttpError, DocumentRefused, ParseLimitExceeded):
            continue
    return []


async def _read(
    client: SafeClient,
    parser: ParsePool,
    outcome: SitemapOutcome,
    locations: list[str],
    policy: PollPolicy,
    *,
    now: datetime,
) -> None:
    source, state = outcome.source, outcome.state
    top_url = locations[0]
    conditional = top_url == (source.sitemap_url or state.sitemap_location)
    top = await client.get(  # refused, unreachable or too big: the poll fails
        top_url,
        fetchprotection=source.fetchprotection,
        politeness_key=source.politeness_key,
        etag=state.sitemap_etag if conditional else None,
        last_modified=state.sitemap_last_modified if conditional else None,
        max_body_bytes=policy.max_sitemap_bytes,
        credentials=credentials_for(source),
        proxy=route_for(source),
    )
    outcome.http_status = top.status
    decision = decide(top.status, top.headers, now)
    if decision.failed:  # the whole poll failed: back off (Retry-After honoured)
        outcome.outcome, outcome.retry_after_s = decision.outcome, decision.retry_after_s
        outcome.error = f"answered {decision.error} ({top_url})"
        return
    etag, last_modified = top.headers.get("ETag"), top.headers.get("Last-Modified")
    if decision.verdict is Verdict.NOT_MODIFIED:
        outcome.outcome = LogOutcome.NOT_MODIFIED
        etag = etag or state.sitemap_etag
        last_modified = last_modified or state.sitemap_last_modified
    else:

        async def get(url: str) -> Response:
            return await client.get(
                url,
                fetchprotection=source.fetchprotection,
                politeness_key=source.politeness_key,
                max_body_bytes=policy.max_sitemap_bytes,
                credentials=credentials_for(source),
                proxy=route_for(source),
            )

        walked = await walk_sitemaps(
            top,
            get,
            parser,
            WalkLimits(policy.max_sitemap_files, policy.poll_budget(), policy.max_sitemap_depth),
            label=source.name,
            requested=[top_url],
            starts=locations[1:],
            since=cutoff_of(state, now, policy.sitemap_window_s),
        )
        outcome.urls, outcome.items_seen = walked.urls, walked.items_seen
        outcome.error = problems_text(walked.problems)
        outcome.outcome = LogOutcome.OK
    outcome.state = replace(
        state,
        sitemap_location=None if source.sitemap_url else top_url,
        sitemap_etag=etag,
        sitemap_last_modified=last_modified,
        sitemap_cursor_at=now,
        sitemap_consecutive_errors=0,
        sitemap_last_error=outcome.error,
        sitemap_next_poll_at=intervals.next_poll_ok(now, source.id, policy.sitemap_interval_s),
    )


def _requestable(source: Source, urls: list[str]) -> list[str]:
    """robots.txt `Sitemap:` lines as request URLs, unusable ones logged and dropped, each
    identity once."""
    found: dict[str, str] = {}
    for url in urls:
        try:
            found.setdefault(normalize_url(url), request_url(url))
        except InvalidURL as exc:
            log.info(
                "source %s: robots.txt Sitemap %r skipped: %s", source.name, url[:200], exc.reason
            )
    return list(found.values())
