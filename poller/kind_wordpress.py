"""The `wordpress` source kind: a WordPress site's REST listing of posts,
`/wp-json/wp/v2/posts` (WordPress 4.7+ serves it without a plugin), which many news sites
expose when their feed is truncated to a few items or titles.

As WordPress documents it (developer.wordpress.org/rest-api: Pagination, Linking and
Embedding, the Posts reference): `?per_page=` (1-100, default 10) and `?page=`, the totals
in the `X-WP-Total` and `X-WP-TotalPages` headers, a page past the last answered 400
(`rest_post_invalid_page_number`). The newest posts come first (the default
`orderby=date`, `order=desc`). Each page is read in a parse process (`request.parser`,
`frontier.parse_pool`), never on the event loop, by `poller.wordpress_parse`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from pydantic import Field

from frontier.source_kinds import PollOptions
from frontier.sources import Source
from frontier.states import Origin
from frontier.urls import normalize_url
from poller.kinds import KindRequest, KindResult
from poller.wordpress_parse import parse_posts

ENDPOINT = "/wp-json/wp/v2/posts"


class WordPressOptions(PollOptions):
    url: str | None = Field(
        default=None,
        max_length=4096,
        description="The site (its /wp-json/wp/v2/posts is polled) or the endpoint itself;"
        " unset: the source's base_url.",
    )
    per_page: int = Field(default=20, strict=True, ge=1, le=100, description="Posts per page.")
    max_pages: int = Field(default=1, strict=True, ge=1, le=10, description="Pages per poll.")
    categories: list[int] | None = Field(
        default=None, max_length=100, description="Only posts in these category ids."
    )


class WordPressKind:
    name = "wordpress"
    config_model = WordPressOptions
    origin = Origin.FEED

    def target(self, source: Source, options: Any) -> str | None:
        site = options.url or source.base_url
        if not site:
            return None
        endpoint = site if "/wp-json/" in site else site.rstrip("/") + ENDPOINT
        return normalize_url(endpoint, keep_trailing_slash=True)

    async def poll(self, request: KindRequest) -> KindResult:
        assert request.url is not None
        options: WordPressOptions = request.options
        first = await request.get(_page(request.url, options, 1), conditional=True)
        if not request.readable(first):
            return KindResult(first)
        entries = await request.parser.run(parse_posts, first.body, first.url)
        seen = len(entries)
        pages = min(options.max_pages, _int(first.headers.get("X-WP-TotalPages"), 1))
        for page in range(2, pages + 1):
            response = await request.get(_page(request.url, options, page))
            if not 200 <= response.status < 300:
                break  # a page past the end (posts removed meanwhile): keep what we have
            more = await request.parser.run(parse_posts, response.body, response.url)
            seen += len(more)
            entries.extend(more)
        return KindResult(first, entries, seen)


def _page(endpoint: str, options: WordPressOptions, page: int) -> str:
    query: dict[str, Any] = {"per_page": options.per_page, "_embed": ""}
    if page > 1:
        query["page"] = page
    if options.categories:
        query["categories"] = ",".join(str(c) for c in options.categories)
    separator = "&" if "?" in endpoint else "?"
    return endpoint + separator + urlencode(query)


def _int(value: str | None, default: int) -> int:
    try:
        return max(1, int(value)) if value is not None else default
    except ValueError:
        return default
