"""What the fetcher needs of each source (name, fetchprotection, CSS selectors, revisit
schedule, the sites it publishes from, the languages it keeps, its credentials and proxy,
whether its pages are rendered), cached per process for five minutes so a source edit
reaches every fetcher within that time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from fetcher.canonical import site_of
from frontier.politeness_key import KeyMode
from frontier.proxies import ProxyRoute, route_for
from frontier.source_credentials import Credentials, CredentialsUnavailable, credentials_for
from frontier.sources import SourceRepository, UnknownSource
from frontier.urls import InvalidURL, normalize_url, url_host

CACHE_SECONDS = 300.0


@dataclass(frozen=True, slots=True)
class SourceInfo:
    name: str | None
    fetchprotection: int = 2
    selectors: dict[str, Any] | None = None
    revisit: tuple[int, ...] | None = None  # seconds between revisits (frontier.revisits)
    sites: frozenset[str] = frozenset()  # registrable domains of its feed, sitemap, base URL
    politeness_key: KeyMode | None = None  # its own key mode; None: the fetcher's setting
    languages: frozenset[str] | None = None  # the languages it keeps; None: any
    # its access, resolved (frontier.source_credentials); or why its secrets are unreadable
    credentials: Credentials | None = None
    credentials_error: str | None = None
    proxy: ProxyRoute | None = None  # its own proxy, for its hosts (frontier.proxies)
    render: str = "never"  # never, auto, always (fetcher.render_step)


UNKNOWN = SourceInfo(None)


class SourceCache:
    def __init__(
        self,
        sources: SourceRepository,
        *,
        ttl_s: float = CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sources = sources
        self._ttl = ttl_s
        self._clock = clock
        self._entries: dict[UUID, tuple[float, SourceInfo]] = {}

    async def get_many(self, ids: Iterable[UUID | None]) -> dict[UUID, SourceInfo]:
        now = self._clock()
        wanted = {i for i in ids if i is not None}
        stale = [
            i for i in wanted if i not in self._entries or self._entries[i][0] + self._ttl <= now
        ]
        if stale:
            loaded = await asyncio.gather(*(self._load(i) for i in stale))
            for source_id, info in zip(stale, loaded, strict=True):
                self._entries[source_id] = (now, info)
        return {i: self._entries[i][1] for i in wanted}

    async def _load(self, source_id: UUID) -> SourceInfo:
        try:
            source = await self._sources.get_by_id(source_id)
        except UnknownSource:
            return UNKNOWN  # deleted meanwhile: fetch with the defaults
        selectors = source.selectors if isinstance(source.selectors, dict) else None
        revisit = tuple(source.revisit) if source.revisit else None
        sites = _sites(source.base_url, source.feed_url, source.sitemap_url)
        mode = KeyMode(source.politeness_key) if source.politeness_key else None
        languages = frozenset(source.languages) if source.languages else None
        credentials, error, proxy = None, None, None
        try:
            credentials = credentials_for(source)
        except CredentialsUnavailable as exc:
            error = f"access: {exc}"
        try:
            proxy = route_for(source)
        except CredentialsUnavailable as exc:
            error = f"proxy: {exc}"
        return SourceInfo(
            source.name,
            source.fetchprotection,
            selectors,
            revisit,
            sites,
            mode,
            languages,
            credentials,
            error,
            proxy,
            source.render,
        )


def _sites(*urls: str | None) -> frozenset[str]:
    """The registrable domains of a source's URLs (its own site: a URL there is the
    publisher's, not a copy)."""
    sites = set()
    for url in filter(None, urls):
        try:
            sites.add(site_of(url_host(normalize_url(url))))
        except InvalidURL:
            continue
    return frozenset(sites)
