"""The `wordpress` source kind: a WordPress site's REST listing of posts,
`/wp-json/wp/v2/posts` (WordPress 4.7+ serves it without a plugin), which many news sites
expose when their feed is truncated to a few items or titles.

As WordPress documents it (developer.wordpress.org/rest-api: Pagination, Linking and
Embedding, the Posts reference): `?per_page=` (1-100, default 10) and `?page=`, the totals
in the `X-WP-Total` and `X-WP-TotalPages` headers, a page past the last answered 400
(`rest_post_invalid_page_number`); each post carries `link`, `date_gmt` and
`modified_gmt` (ISO 8601 without a zone, in UTC), `title.rendered`, `excerpt.rendered`
and `content.rendered` (HTML); with `?_embed` the author (`_embedded.author[0].name`)
and the featured image (`_embedded["wp:featuredmedia"][0].source_url`) come inline.
The newest posts come first (the default `orderby=date`, `order=desc`). Each page (JSON,
and the HTML of its excerpts and contents) is read in a parse process (`request.parser`,
`frontier.parse_pool`), never on the event loop.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from pydantic import Field

from frontier.source_kinds import PollOptions
from frontier.sources import Source
from frontier.states import Origin
from frontier.urls import normalize_url
from poller.entries import Entry, absolute, build_entry
from poller.errors import DocumentRefused
from poller.kinds import KindRequest, KindResult

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
        entries = await request.parser.run(_entries, first.body, first.url)
        seen = len(entries)
        pages = min(options.max_pages, _int(first.headers.get("X-WP-TotalPages"), 1))
        for page in range(2, pages + 1):
            response = await request.get(_page(request.url, options, page))
            if not 200 <= response.status < 300:
                break  # a page past the end (posts removed meanwhile): keep what we have
            more = await request.parser.run(_entries, response.body, response.url)
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


def _entries(body: bytes, base: str) -> list[Entry]:
    try:
        posts = json.loads(body)
    except ValueError as exc:
        raise DocumentRefused(f"not a WordPress posts listing (not JSON: {exc})") from None
    if not isinstance(posts, list):
        raise DocumentRefused("not a WordPress posts listing (not a JSON array)")
    entries = []
    for post in posts:
        if not isinstance(post, dict):
            continue
        url = absolute(post.get("link"), base)
        if url is None:
            continue
        found = post.get("_embedded")
        embedded: dict[str, Any] = found if isinstance(found, dict) else {}
        entries.append(
            build_entry(
                url=url,
                title=_rendered(post, "title"),
                summary_html=_rendered(post, "excerpt"),
                content_html=_rendered(post, "content"),
                author=_first(embedded, "author", "name"),
                published_at=_gmt(post.get("date_gmt")) or _gmt(post.get("modified_gmt")),
                image_url=absolute(_first(embedded, "wp:featuredmedia", "source_url"), url),
            )
        )
    return entries


def _rendered(post: dict[str, Any], key: str) -> str | None:
    value = post.get(key)
    rendered = value.get("rendered") if isinstance(value, dict) else None
    return rendered if isinstance(rendered, str) else None


def _first(embedded: dict[str, Any], key: str, field: str) -> str | None:
    items = embedded.get(key)
    if isinstance(items, list) and items and isinstance(items[0], dict):
        value = items[0].get(field)
        return value if isinstance(value, str) else None
    return None


def _gmt(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _int(value: str | None, default: int) -> int:
    try:
        return max(1, int(value)) if value is not None else default
    except ValueError:
        return default
