"""The `feed` source kind: RSS, Atom or JSON Feed at the source's `feed_url` (or the feed
auto-discovered from its `base_url`, which the poller does before calling it)."""

from __future__ import annotations

from typing import Any

from frontier.source_kinds import PollOptions
from frontier.sources import Source
from frontier.states import Origin
from poller.feed_parse import parse_feed
from poller.kinds import KindRequest, KindResult

ACCEPT = (
    "application/rss+xml, application/atom+xml, application/feed+json,"
    " application/xml;q=0.9, text/xml;q=0.8, */*;q=0.5"
)


class FeedOptions(PollOptions):
    """A feed takes the common options only; its URL is the source's `feed_url`."""


class FeedKind:
    name = "feed"
    config_model = FeedOptions
    origin = Origin.FEED

    def target(self, source: Source, options: Any) -> str | None:
        return source.feed_url

    async def poll(self, request: KindRequest) -> KindResult:
        assert request.url is not None
        response = await request.get(request.url, conditional=True, headers={"Accept": ACCEPT})
        if not request.readable(response):
            return KindResult(response)
        parsed = await request.parse(
            parse_feed, response.body, dict(response.headers), response.url
        )
        websub = (parsed.hub, parsed.topic) if parsed.hub and parsed.topic else None
        return KindResult(response, parsed.entries, parsed.items_seen, parsed.ttl, websub=websub)
