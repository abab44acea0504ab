"""The `sitemap` source kind: a source polled as a sitemap (urlset, index or text), each
`<loc>` an entry (Google News title and publication date, image, `lastmod`). The tree
under the top sitemap is read by `poller.sitemap_walk` (the walk a source's own sitemaps
use too): breadth first, at most `max_files` documents per poll and indexes nested at
most `sitemap_walk.MAX_DEPTH` deep, never one twice, within the poll's budget
(`PollPolicy.poll_budget`), each parsed in a parse process; what was skipped is named in
the poll's error. (A feed source's `sitemap_url` is still polled beside its feed on the
sitemap interval, by `poller.sitemaps`, with its own window and cursor; a `sitemap_url`
this kind polls itself is not read there a second time.)"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from frontier.safe_http.responses import Response
from frontier.source_kinds import PollOptions
from frontier.sources import Source
from frontier.states import Origin
from frontier.urls import normalize_url
from poller.entries import Entry
from poller.kinds import KindRequest, KindResult
from poller.sitemap_parse import SitemapUrl
from poller.sitemap_walk import WalkLimits, walk_sitemaps


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

        async def get(url: str) -> Response:
            return await request.get(url)

        walked = await walk_sitemaps(
            top,
            get,
            request.parser,
            WalkLimits(request.options.max_files, request.budget),
            label=request.source.name,
            requested=[request.url],
        )
        entries = [_entry(item) for item in walked.urls]
        return KindResult(top, entries, walked.items_seen, problems=walked.problems)


def _entry(item: SitemapUrl) -> Entry:
    return Entry(
        url=item.loc,
        title=item.news_title,
        published_at=item.news_published_at or item.lastmod,
        image_url=item.image_urls[0] if item.image_urls else None,
    )
