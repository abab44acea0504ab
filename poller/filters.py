"""Per-source entry filters, from `sources.url_filters` (a JSON object) and
`sources.min_published_at`:

    {"include": ["regex", ...],        # keep only URLs matching one of these
     "exclude": ["regex", ...],        # drop URLs matching any of these
     "keywords": ["word", ...],        # keep only entries whose title/summary has one
     "exclude_keywords": ["word", ...],
     "most_recent": 20,                # keep only the k newest entries
     "random": 5}                      # keep k entries chosen at random (3, 5 or 10)

Entries without a date pass the date filter and count as newest (err on inclusion).
`random` draws from what the other filters kept, with a seed given per poll
(`poll_seed`: the source and its last poll), so a dry run draws what the real poll after
it draws, and each real poll draws afresh.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from poller.entries import Entry
from poller.errors import DocumentRefused

FILTER_KEYS = frozenset(
    {"include", "exclude", "keywords", "exclude_keywords", "most_recent", "random"}
)
RANDOM_SIZES = frozenset({3, 5, 10})


def poll_seed(source_id: UUID, last_polled_at: datetime | None) -> int:
    """The seed of one poll's random draw: the same until the source's poll is written."""
    key = f"{source_id}:{last_polled_at.isoformat() if last_polled_at else '-'}"
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")


@dataclass(frozen=True, slots=True)
class EntryFilter:
    include: tuple[re.Pattern[str], ...] = ()
    exclude: tuple[re.Pattern[str], ...] = ()
    keywords: tuple[str, ...] = ()
    exclude_keywords: tuple[str, ...] = ()
    most_recent: int | None = None
    min_published_at: datetime | None = None
    random: int | None = None

    @classmethod
    def from_source(
        cls, url_filters: Mapping[str, Any] | None, min_published_at: datetime | None = None
    ) -> EntryFilter:
        """Build from a source's columns; `DocumentRefused` names a bad option."""
        spec = dict(url_filters or {})
        unknown = set(spec) - FILTER_KEYS
        if unknown:
            raise DocumentRefused(f"url_filters: unknown keys {sorted(unknown)}")
        most_recent = spec.get("most_recent")
        if most_recent is not None and (
            not isinstance(most_recent, int) or isinstance(most_recent, bool) or most_recent < 1
        ):
            raise DocumentRefused("url_filters.most_recent: must be a positive integer")
        sample = spec.get("random")
        if sample is not None and (isinstance(sample, bool) or sample not in RANDOM_SIZES):
            raise DocumentRefused("url_filters.random: must be 3, 5 or 10")
        return cls(
            include=_patterns(spec, "include"),
            exclude=_patterns(spec, "exclude"),
            keywords=_words(spec, "keywords"),
            exclude_keywords=_words(spec, "exclude_keywords"),
            most_recent=most_recent,
            min_published_at=min_published_at,
            random=sample,
        )

    def apply(self, entries: Sequence[Entry], *, seed: int = 0) -> list[Entry]:
        """The entries kept, in feed order; `seed` drives the `random` draw."""
        kept = [entry for entry in entries if self._keeps(entry)]
        if self.most_recent is not None and len(kept) > self.most_recent:
            newest_first = sorted(
                kept,
                key=lambda e: e.published_at or datetime.max.replace(tzinfo=UTC),
                reverse=True,
            )
            chosen = {id(e) for e in newest_first[: self.most_recent]}
            kept = [entry for entry in kept if id(entry) in chosen]
        if self.random is not None and len(kept) > self.random:
            drawn = set(random.Random(seed).sample(range(len(kept)), self.random))
            kept = [entry for index, entry in enumerate(kept) if index in drawn]
        return kept

    def _keeps(self, entry: Entry) -> bool:
        if self.include and not any(p.search(entry.url) for p in self.include):
            return False
        if any(p.search(entry.url) for p in self.exclude):
            return False
        if self.keywords or self.exclude_keywords:
            text = f"{entry.title or ''} {entry.summary or ''}".casefold()
            if self.keywords and not any(k in text for k in self.keywords):
                return False
            if any(k in text for k in self.exclude_keywords):
                return False
        return not (
            self.min_published_at is not None
            and entry.published_at is not None
            and entry.published_at < self.min_published_at
        )


def _patterns(spec: Mapping[str, Any], key: str) -> tuple[re.Pattern[str], ...]:
    values = spec.get(key) or []
    if isinstance(values, str) or not isinstance(values, list):
        raise DocumentRefused(f"url_filters.{key}: must be a list of regexes")
    patterns = []
    for value in values:
        try:
            patterns.append(re.compile(str(value)))
        except re.error as exc:
            raise DocumentRefused(f"url_filters.{key}: bad regex {value!r}: {exc}") from None
    return tuple(patterns)


def _words(spec: Mapping[str, Any], key: str) -> tuple[str, ...]:
    values = spec.get(key) or []
    if isinstance(values, str) or not isinstance(values, list):
        raise DocumentRefused(f"url_filters.{key}: must be a list of words")
    return tuple(str(v).casefold() for v in values if str(v).strip())
