"""One feed entry as the frontier wants it, and how raw fields become one.

`Entry` holds `url` (required, absolute), `title`, `summary` (HTML stripped, entities
decoded), `author`, `published_at` (published, else updated, else None), `image_url` and
`content_quality`:

- `full`       the entry carries the article's text (at least FULL_WORDS words)
- `summary`    a real summary (at least SUMMARY_WORDS words)
- `stub`       a few words only
- `title_only` nothing but a title (or not even that)
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any
from urllib.parse import urljoin

from selectolax.lexbor import LexborHTMLParser as HTMLParser

from poller.renamed import old_name

FULL_WORDS = 200
SUMMARY_WORDS = 25
MAX_SUMMARY_CHARS = 1_000
MAX_TITLE_CHARS = 500
_MARKUP = re.compile(r"<[a-zA-Z/!?]")
_SPACE = re.compile(r"\s+")


class ContentQuality(StrEnum):
    FULL = "full"
    SUMMARY = "summary"
    STUB = "stub"
    TITLE_ONLY = "title_only"


@dataclass(frozen=True, slots=True)
class Entry:
    url: str
    title: str | None = None
    summary: str | None = None
    author: str | None = None
    published_at: datetime | None = None
    image_url: str | None = None
    content_quality: ContentQuality = ContentQuality.TITLE_ONLY

    def as_meta(self) -> dict[str, Any]:
        """What goes into `url_frontier.discovery_meta`."""
        meta: dict[str, Any] = {"content_quality": str(self.content_quality)}
        for name in ("title", "summary", "author", "image_url"):
            value = getattr(self, name)
            if value:
                meta[name] = value
        if self.published_at is not None:
            meta["published_at"] = self.published_at.isoformat()
        return meta

    def as_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            **self.as_meta(),
            "published_at": self.published_at.isoformat() if self.published_at else None,
        }


def html_to_text(value: str | None) -> str:
    """Plain text of an HTML fragment (or of text with entities), whitespace collapsed."""
    return _text_and_tree(value)[0]


def _text_and_tree(value: str | None) -> tuple[str, HTMLParser | None]:
    """`html_to_text` and the parsed tree (None when `value` has no markup)."""
    if not value:
        return "", None
    tree = None
    if _MARKUP.search(value):
        tree = HTMLParser(value)
        for node in tree.css("script, style"):
            node.decompose()
        text = tree.text(separator=" ") if tree.body is not None else ""
        if not text and tree.root is not None:
            text = tree.root.text(separator=" ")
    else:
        text = html.unescape(value)
    return _SPACE.sub(" ", text).strip(), tree


def first_image(fragment: str | None, base: str, tree: HTMLParser | None = None) -> str | None:
    """The first `<img src>` of `fragment`, absolute; `tree`: `fragment` already parsed
    (dropping script and style elements removes no img element: their content is text)."""
    if not fragment or "<img" not in fragment.lower():
        return None
    node = (tree or HTMLParser(fragment)).css_first("img[src]")
    src = node.attributes.get("src") if node is not None else None
    return absolute(src, base)


def absolute(link: str | None, base: str) -> str | None:
    """`link` resolved against `base`; None for empty or non-http(s) links."""
    if not link or not isinstance(link, str):
        return None
    try:
        resolved = urljoin(base, link.strip())
    except ValueError:
        return None
    return resolved if resolved.startswith(("http://", "https://")) else None


def quality(body_text: str, has_summary: bool) -> ContentQuality:
    words = len(body_text.split())
    if words >= FULL_WORDS:
        return ContentQuality.FULL
    if words >= SUMMARY_WORDS:
        return ContentQuality.SUMMARY
    if words > 0 or has_summary:
        return ContentQuality.STUB
    return ContentQuality.TITLE_ONLY


def build_entry(
    *,
    url: str,
    title: str | None,
    summary_html: str | None,
    content_html: str | None,
    author: str | None,
    published_at: datetime | None,
    image_url: str | None,
) -> Entry:
    """Normalise raw fields into a `Entry` (`url` already absolute)."""
    summary, summary_tree = _text_and_tree(summary_html)
    content, content_tree = _text_and_tree(content_html)
    body = content if len(content) > len(summary) else summary
    if not summary and content:
        summary = content
    if len(summary) > MAX_SUMMARY_CHARS:
        summary = summary[: MAX_SUMMARY_CHARS - 1].rstrip() + "…"
    clean_title = html_to_text(title)[:MAX_TITLE_CHARS] or None
    return Entry(
        url=url,
        title=clean_title,
        summary=summary or None,
        author=html_to_text(author) or None,
        published_at=published_at,
        image_url=image_url
        or (
            first_image(content_html, url, content_tree)
            if content_html
            else first_image(summary_html, url, summary_tree)
        ),
        content_quality=quality(body, bool(summary)),
    )


def __getattr__(name: str) -> Any:  # the old names of the plugin interface (renamed.py)
    return old_name(__name__, globals(), name)
