"""What the spider hands to the frontier pipeline."""

from __future__ import annotations

from dataclasses import dataclass

from frontier.queue_values import SourceRef


@dataclass(frozen=True, slots=True)
class ArticleLink:
    """An article URL to submit (origin `spider`); `depth` is its page's depth + 1. `url` is
    the normalised form (the spider's seen-key); `href` the absolute URL as the page wrote
    it, which is what is submitted (the frontier keeps it as the spelling to request)."""

    url: str
    source: SourceRef
    parent_url: str
    depth: int
    href: str = ""
