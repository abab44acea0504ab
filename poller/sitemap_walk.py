"""The one walk of a sitemap tree, used by both pollers of sitemaps: the `sitemap` kind
(`poller.kind_sitemap`) and a source's own sitemaps (`poller.sitemaps`).

From a top document already fetched (and judged worth reading by its caller, which
owns the conditional GET and what a failed top answer means), indexes are followed
breadth first: at most `max_files` documents, indexes nested at most `max_depth` below
the top, never one URL twice (by identity, `frontier.urls.normalize_url`), within what
is left of the poll's budget (inflated bytes, elements, URLs over all the files). Each
document is parsed in a parse process (`frontier.parse_pool`, under its time, CPU and
memory limits). Each child is requested through the caller's `get` (the safe client
with the source's fetch protection and politeness key, and the caller's body cap).

A top document that cannot be parsed raises (`DocumentRefused`, `ParseLimitExceeded`):
the poll fails. Every child of an index is a URL from outside: one that is invalid,
refused, unreachable, not a 2xx or unusable is skipped, logged and named in `problems`,
and the rest of the tree is still read.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from frontier.parse_pool import ParseLimitExceeded, ParsePool
from frontier.safe_http.errors import HttpError
from frontier.safe_http.responses import Response
from frontier.urls import InvalidURL, normalize_url
from poller.errors import DocumentRefused
from poller.sitemap_parse import Budget, SitemapUrl, parse_sitemap, per_file

log = logging.getLogger(__name__)

MAX_DEPTH = 3  # index -> index -> index -> urlset

Get = Callable[[str], Awaitable[Response]]


@dataclass(frozen=True, slots=True)
class WalkLimits:
    max_files: int  # documents read, the top one included
    budget: Budget  # what the whole walk may read, over all its files
    max_depth: int = MAX_DEPTH  # index levels followed below the top document


@dataclass(slots=True)
class Walked:
    urls: list[SitemapUrl] = field(default_factory=list)  # pages kept, each `loc` once
    items_seen: int = 0  # pages listed, kept or not
    problems: list[str] = field(default_factory=list)  # what was skipped, and why


async def walk_sitemaps(
    top: Response,
    get: Get,
    parser: ParsePool,
    limits: WalkLimits,
    *,
    label: str,
    requested: Sequence[str] = (),
    starts: Sequence[str] = (),
    since: datetime | None = None,
) -> Walked:
    """Read the tree under `top`. `label` names the source in log lines; `requested`:
    the URLs `top` was asked for (before redirects), never read again; `starts`: other
    documents at the top level (robots.txt `Sitemap:` lines), read as children are;
    `since`: pages and child sitemaps with a modification date before it are skipped
    (undated ones are kept)."""
    walk = _Walk(parser, limits, label, since, {identity(u) for u in (*requested, top.url)})
    walk.enqueue(starts, None, 0)
    await walk.read(top, top.url, 0, top=True)
    files = 1  # documents requested, the failed ones too
    while walk.queue and files < limits.max_files:
        if walk.budget.spent:
            whole = limits.budget
            walk.walked.problems.append(
                f"stopped at the poll's budget ({whole.bytes // (1024 * 1024)} MiB inflated, "
                f"{whole.elements} elements, {whole.urls} URLs): {len(walk.queue)} files not read"
            )
            break
        url, depth = walk.queue.pop(0)
        files += 1
        response = await walk.child(get, url)
        if response is not None:
            await walk.read(response, url, depth)
    walk.walked.urls = list(walk.kept.values())
    return walk.walked


@dataclass(slots=True)
class _Walk:
    parser: ParsePool
    limits: WalkLimits
    label: str
    since: datetime | None
    seen: set[str]  # identities requested or queued
    queue: list[tuple[str, int]] = field(default_factory=list)  # (request URL, depth)
    kept: dict[str, SitemapUrl] = field(default_factory=dict)
    walked: Walked = field(default_factory=Walked)
    budget: Budget = field(init=False)

    def __post_init__(self) -> None:
        self.budget = self.limits.budget

    async def read(self, response: Response, url: str, depth: int, *, top: bool = False) -> None:
        """Parse one document; keep its pages, or queue its children."""
        problems = self.walked.problems
        try:
            sitemap = await self.parser.run(
                parse_sitemap, response.body, self.budget.within(per_file())
            )
        except (DocumentRefused, ParseLimitExceeded) as exc:
            if top:
                raise
            problems.append(f"{exc} ({url})")
            return
        self.budget = self.budget.after(sitemap)
        if sitemap.limit:
            problems.append(f"stopped at the size or URL limit: {sitemap.limit} ({url})")
        fresh = [u for u in sitemap.urls if self.since is None or not _older(u, self.since)]
        if sitemap.kind != "index":
            self.walked.items_seen += len(sitemap.urls)
            for item in fresh:
                self.kept.setdefault(item.loc, item)
        elif depth >= self.limits.max_depth:
            problems.append(f"index nested deeper than {self.limits.max_depth} ({url})")
        else:
            self.enqueue([u.loc for u in fresh], response.url, depth + 1)

    def enqueue(self, locs: Sequence[str], base: str | None, depth: int) -> None:
        for loc in locs:
            try:
                url = request_url(loc, base)
            except InvalidURL as exc:
                log.info(
                    "source %s: sitemap child %r skipped: %s", self.label, loc[:200], exc.reason
                )
                self.walked.problems.append(f"{loc[:200]!r}: skipped ({exc.reason})")
                continue
            key = normalize_url(url)
            if key not in self.seen:
                self.seen.add(key)
                self.queue.append((url, depth))

    async def child(self, get: Get, url: str) -> Response | None:
        """The child's response worth parsing, or None (the reason in the problems)."""
        try:
            response = await get(url)
        except HttpError as exc:  # refused by the SSRF guard or policy, unreachable, too big
            log.info("source %s: sitemap %s skipped: %s", self.label, url, exc)
            self.walked.problems.append(f"skipped: {exc} ({url})")
            return None
        if not 200 <= response.status < 300:
            self.walked.problems.append(f"HTTP {response.status} ({url})")
            return None
        return response


def _older(item: SitemapUrl, since: datetime) -> bool:
    return item.modified_at is not None and item.modified_at < since


def request_url(url: str, base: str | None = None) -> str:
    """`url` (resolved against `base`) as it is requested: normalised (scheme, host, port,
    escapes; `InvalidURL` if unusable) with the site's trailing slash kept, as redirects
    are in `SafeClient`."""
    return normalize_url(url, base, keep_trailing_slash=True)


def identity(url: str) -> str:
    """`url` normalised (the never-twice key), or as given when unusable."""
    try:
        return normalize_url(url)
    except InvalidURL:
        return url
