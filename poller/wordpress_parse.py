"""Reading a page of a WordPress posts listing (`/wp-json/wp/v2/posts`, the `wordpress`
kind: poller/kind_wordpress.py), a parse job run in the parse pool (`frontier.parse_pool`).

Each post carries `link`, `date_gmt` and `modified_gmt` (ISO 8601 without a zone, in
UTC), `title.rendered`, `excerpt.rendered` and `content.rendered` (HTML); with `?_embed`
the author (`_embedded.author[0].name`) and the featured image
(`_embedded["wp:featuredmedia"][0].source_url`) come inline.

A module of its own, registered in `frontier.parse_preload` (pyproject.toml), apart from
the kind: the parse pool's fork server imports what is registered there, and the kind's
module brings the HTTP client, the settings and the source models with it, which a parse
needs none of (they made the fork server's start several times longer, and the first parse
of a `frontier poll --once` waited for it).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from poller.entries import Entry, absolute, build_entry
from poller.errors import DocumentRefused


def parse_posts(body: bytes, base: str) -> list[Entry]:
    """The entries of one page of posts (`base`: the URL it came from)."""
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
