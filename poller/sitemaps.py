"""Poll one source's sitemaps, on their own interval.

Where: the source's `sitemap_url`; else the location found before; else robots.txt
`Sitemap:` lines of the site; else the well-known paths. Indexes are followed breadth
first up to `max_sitemap_depth` and `max_sitemap_files`, never twice to one URL. Every
child of an index and every robots.txt `Sitemap:` line is a URL from outside: it goes
through `frontier.urls.normalize_url` (its identity, for the never-twice check; the
request keeps the site's trailing slash, as redirects do in `SafeClient`) and the safe
client; one that is invalid, refused or unreachable is skipped, logged and named in the
poll's error, and the rest of the index is still read. Each document (and the robots.txt)
is parsed in a parse process (`frontier.parse_pool`, under its time, CPU and memory
limits), within what is left of the poll's budget (`PollPolicy.poll_budget`: inflated
bytes, elements, URLs); a poll whose budget is spent reads no more files. Only URLs
modified within the window (or since the last successful poll, if that is longer ago)
are kept; URLs without a date are kept. Like `poll_feed`, nothing is written here.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from urllib.parse import urljoin

from frontier.parse_pool import ParseLimitExceeded, ParsePool
from frontier.safe_http.client import SafeClient
from frontier.safe_http.errors import BlockedAddress, HttpError, PolicyBlocked
from frontier.safe_http.responses import Response
from frontier.source_credentials import credentials_for
from frontier.source_kinds import DEFAULT_KIND
from frontier.sources import Source
from frontier.states import LogOutcome
from frontier.urls import InvalidURL, normalize_url
from poller import intervals
from poller.errors import FeedRefused
from poller.feed_state import FeedState
from poller.policy import PollPolicy
from poller.responses import Verdict, decide
from poller.sitemap_parse import SitemapUrl, parse_sitemap, per_file, sitemaps_in_robots

log = logging.getLogger(__name__)

WELL_KNOWN = ("/sitemap.xml", "/sitemap_index.xml", "/news-sitemap.xml", "/sitemap_news.xml")
CURSOR_MARGIN = timedelta(hours=1)  # overlap with the previous poll's window


@dataclass(slots=True)
class SitemapOutcome:
    source: Source
    state: FeedState
    url: str | None  # the top sitemap polled (None: none known, nothing logged)
    outcome: LogOutcome | None
    urls: list[SitemapUrl] = field(default_factory=list)
    items_seen: int = 0
    items_new: int = 0
    http_status: int | None = None
    error: str | None = None
    elapsed_ms: int = 0
    retry_after_s: float | None = None  # 429/503 Retry-After of the top sitemap

    @property
    def failed(self) -> bool:
        return self.outcome is not None and self.outcome not in (
            LogOutcome.OK,
            LogOutcome.OK_NO_NEW,
            LogOutcome.NOT_MODIFIED,
        )


def cutoff_of(state: FeedState, now: datetime, window_s: float) -> datetime:
    """URLs modified before this are skipped: the window, widened back to the last
    successful poll after an outage so nothing published meanwhile is lost."""
    cutoff = now - timedelta(seconds=window_s)
    if state.sitemap_cursor_at is not None:
        cutoff = min(cutoff, state.sitemap_cursor_at - CURSOR_MARGIN)
    return cutoff


async def poll_sitemaps(
    client: SafeClient,
    source: Source,
    state: FeedState,
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
        source.sitemap_url
        and kind_target
        and _identity(source.sitemap_url) == _identity(kind_target)
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
    except (BlockedAddress, PolicyBlocked) as exc:
        outcome.outcome, outcome.error = LogOutcome.REFUSED, str(exc)
    except HttpError as exc:
        outcome.outcome, outcome.error = LogOutcome.FAILED, str(exc)
    except (FeedRefused, ParseLimitExceeded) as exc:
        outcome.outcome, outcome.error = LogOutcome.FAILED, f"unusable sitemap: {exc}"
    outcome.elapsed_ms = int((time.monotonic() - started) * 1000)
    if outcome.failed:
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
    client: SafeClient, parser: ParsePool, source: Source, state: FeedState, site: str
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
            )
            if response.status == 200:
                await parser.run(parse_sitemap, response.body)
                return [response.url]
        except (HttpError, FeedRefused, ParseLimitExceeded):
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
    cutoff = cutoff_of(state, now, policy.sitemap_window_s)
    queue: list[tuple[str, int]] = [(url, 0) for url in locations]
    visited: set[str] = set()  # identities (normalised URLs)
    problems: list[str] = []
    urls: dict[str, SitemapUrl] = {}
    etag = last_modified = None
    files = 0
    budget = policy.poll_budget()
    while queue and files < policy.max_sitemap_files:
        if budget.spent:
            whole = policy.poll_budget()
            problems.append(
                f"stopped at the poll's budget ({whole.bytes // (1024 * 1024)} MiB inflated, "
                f"{whole.elements} elements, {whole.urls} URLs): {len(queue)} files not read"
            )
            break
        url, depth = queue.pop(0)
        identity = _identity(url)
        if identity in visited:
            continue
        visited.add(identity)
        files += 1
        top = url == locations[0]
        try:
            response = await _get(client, source, state, url, top, policy)
        except HttpError as exc:  # refused by the SSRF guard or policy, unreachable, too big
            if top:
                raise
            log.info("source %s: sitemap %s skipped: %s", source.name, url, exc)
            problems.append(f"skipped: {exc} ({url})")
            continue
        decision = decide(response.status, response.headers, now)
        if top:
            outcome.http_status = response.status
            etag, last_modified = (
                response.headers.get("ETag"),
                response.headers.get("Last-Modified"),
            )
            if decision.verdict is Verdict.NOT_MODIFIED:
                outcome.outcome = LogOutcome.NOT_MODIFIED
                break
            if decision.failed:  # the whole poll failed: back off (Retry-After honoured)
                outcome.outcome, outcome.retry_after_s = decision.outcome, decision.retry_after_s
                outcome.error = f"answered {decision.error} ({url})"
                return
        if decision.verdict is not Verdict.PARSE:
            problems.append(f"HTTP {response.status} ({url})")
            continue
        try:
            sitemap = await parser.run(parse_sitemap, response.body, budget.within(per_file()))
        except (FeedRefused, ParseLimitExceeded) as exc:
            if top:
                raise
            problems.append(f"{exc} ({url})")
            continue
        budget = budget.after(sitemap)
        if sitemap.limit:
            problems.append(f"stopped at the size or URL limit: {sitemap.limit} ({url})")
        if sitemap.kind == "index":
            if depth >= policy.max_sitemap_depth:
                problems.append(f"index nested deeper than {policy.max_sitemap_depth} ({url})")
                continue
            for child in sitemap.urls:
                if child.modified_at is not None and child.modified_at < cutoff:
                    continue
                try:
                    queue.append((_request_url(child.loc, response.url), depth + 1))
                except InvalidURL as exc:
                    log.info(
                        "source %s: sitemap child %r skipped: %s",
                        source.name,
                        child.loc[:200],
                        exc.reason,
                    )
                    problems.append(f"{child.loc[:200]!r}: skipped ({exc.reason})")
            continue
        for item in sitemap.urls:
            outcome.items_seen += 1
            if item.modified_at is None or item.modified_at >= cutoff:
                urls.setdefault(item.loc, item)
    outcome.urls = list(urls.values())
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    outcome.error = "; ".join(problems[:5]) + more or None
    if outcome.outcome is not LogOutcome.NOT_MODIFIED:
        outcome.outcome = LogOutcome.OK
    outcome.state = replace(
        state,
        sitemap_location=None if source.sitemap_url else locations[0],
        sitemap_etag=etag
        or (state.sitemap_etag if outcome.outcome is LogOutcome.NOT_MODIFIED else None),
        sitemap_last_modified=last_modified
        or (state.sitemap_last_modified if outcome.outcome is LogOutcome.NOT_MODIFIED else None),
        sitemap_cursor_at=now,
        sitemap_consecutive_errors=0,
        sitemap_last_error=outcome.error,
        sitemap_next_poll_at=intervals.next_poll_ok(now, source.id, policy.sitemap_interval_s),
    )


def _request_url(url: str, base: str | None = None) -> str:
    """`url` (resolved against `base`) as it is requested: normalised (scheme, host, port,
    escapes; `InvalidURL` if unusable) with the site's trailing slash kept."""
    return normalize_url(url, base, keep_trailing_slash=True)


def _identity(url: str) -> str:
    try:
        return normalize_url(url)
    except InvalidURL:
        return url


def _requestable(source: Source, urls: list[str]) -> list[str]:
    """robots.txt `Sitemap:` lines as request URLs, unusable ones logged and dropped, each
    identity once."""
    found: dict[str, str] = {}
    for url in urls:
        try:
            found.setdefault(normalize_url(url), _request_url(url))
        except InvalidURL as exc:
            log.info(
                "source %s: robots.txt Sitemap %r skipped: %s", source.name, url[:200], exc.reason
            )
    return list(found.values())


async def _get(
    client: SafeClient,
    source: Source,
    state: FeedState,
    url: str,
    top: bool,
    policy: PollPolicy,
) -> Response:
    conditional = top and url == (source.sitemap_url or state.sitemap_location)
    return await client.get(
        url,
        fetchprotection=source.fetchprotection,
        politeness_key=source.politeness_key,
        etag=state.sitemap_etag if conditional else None,
        last_modified=state.sitemap_last_modified if conditional else None,
        max_body_bytes=policy.max_sitemap_bytes,
        credentials=credentials_for(source),
    )
