"""The `sitemap` source kind: a source polled as a sitemap (urlset, index or text), each
`<loc>` an entry (Google News title and publication date, image, `lastmod`). Indexes are
followed breadth first, at most `max_files` documents per poll, never one twice, within
the poll's budget (`PollPolicy.poll_budget`), each parsed in a parse process. (A feed
source's `sitemap_url` is still polled beside its feed on the sitemap interval, by
`poller.sitemaps`, with its own window and cursor; a `sitemap_url` this kind polls
itself is not read there a second time.)"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from frontier.parse_pool import ParseLimitExceeded
from frontier.safe_http.errors import HttpError
from frontier.source_kinds import PollOptions
from frontier.sources import Source
from frontier.states import Origin
from frontier.urls import InvalidURL, normalize_url
from poller.entries import FeedEntry
from poller.errors import FeedRefused
from poller.kinds import KindRequest, KindResult
from poller.sitemap_parse import SitemapUrl, parse_sitemap, per_file


class SitemapOptions(PollOptions):
    url: str | None = Field(
        default=None, max_length=4096, description="The sitemap (unset: the source's sitemap_url)."
    )
    max_files: int = Field(default=10, ge=1, le=50, description="Documents read per poll.")


class SitemapKind:
    name = "sitemap"
    config_model = SitemapOptions
    origin = Origin.SITEMAP

    def target(self, source: Source, options: Any) -> str | None:
        url = options.url or source.sitemap_url
        return normalize_url(url, keep_trailing_slash=True) if url else None

    async def poll(self, request: KindRequest) -> KindResult:
        assert request.url is not None
        top = await request.get(request.url, conditional=True)
        if not request.readable(top):
            return KindResult(top)
        queue, seen, entries = [top], {normalize_url(request.url)}, dict[str, FeedEntry]()
        items = files = 0
        budget = request.budget
        while queue and not budget.spent:
            response = queue.pop(0)
            files += 1
            try:
                sitemap = await request.parse(
                    parse_sitemap, response.body, budget.within(per_file())
                )
            except (FeedRefused, ParseLimitExceeded):
                if response is top:
                    raise
                continue
            budget = budget.after(sitemap)
            for item in sitemap.urls:
                if sitemap.kind != "index":
                    items += 1
                    entries.setdefault(item.loc, _entry(item))
                    continue
                try:
                    child = normalize_url(item.loc, response.url, keep_trailing_slash=True)
                except InvalidURL:
                    continue
                if normalize_url(child) in seen or files + len(queue) >= request.options.max_files:
                    continue
                seen.add(normalize_url(child))
                try:
                    answer = await request.get(child)
                except HttpError:  # one unreachable child does not fail the poll
                    continue
                if 200 <= answer.status < 300:
                    queue.append(answer)
        return KindResult(top, list(entries.values()), items)


def _entry(item: SitemapUrl) -> FeedEntry:
    return FeedEntry(
        url=item.loc,
        title=item.news_title,
        published_at=item.news_published_at or item.lastmod,
        image_url=item.image_urls[0] if item.image_urls else None,
    )
