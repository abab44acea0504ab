"""What the spider hands to the frontier pipeline."""

from __future__ import annotations

from dataclasses import dataclass

from frontier.queue import SourceRef


@dataclass(frozen=True, slots=True)
class ArticleLink:
    """An article URL to submit (origin `spider`); `depth` is its page's depth + 1."""

    url: str
    source: SourceRef
    parent_url: str
    depth: int
