"""Everything one crawl needs, read from the database before Scrapy starts: the source,
where to start, how to classify links, the delay of a host the spider reaches first, and
the listing pages seen before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from uuid import UUID

from frontier.db import Database
from frontier.proxies import Proxy, ProxyRoute, password_from, route_for
from frontier.queue_values import SourceRef
from frontier.settings import Settings
from frontier.source_credentials import Credentials, CredentialsUnavailable, credentials_for
from frontier.sources import MANUAL, Source, SourceRepository
from frontier.urls import InvalidURL, normalize_url, url_host
from spider.errors import SpiderConfigError
from spider.links import ArticleRules, KnownSource, LinkClassifier, site_key
from spider.state import PageState, SpiderOptions, SpiderRepository

DISCOVERED = "discovered"  # the built-in source for external links (priority 1)


@dataclass(frozen=True, slots=True)
class CrawlLimits:
    max_pages: int
    max_depth: int
    recrawl_max: timedelta  # an unchanged listing page is re-checked at least this often


@dataclass(frozen=True, slots=True)
class CrawlPlan:
    source_name: str
    source_id: UUID
    source: SourceRef
    start_urls: tuple[str, ...]
    classifier: LinkClassifier
    limits: CrawlLimits
    new_host_delay_ms: int  # host_state's delay for a host the spider is the first to reach
    fetchprotection: int
    politeness_key: str = "host"  # the source's, else the setting (frontier.politeness_key)
    discovered: SourceRef | None = None  # set when the source allows external links
    pages: Mapping[str, PageState] = field(default_factory=dict)
    started_at: datetime | None = None
    # the source's access, resolved in the crawl process (spider.middlewares)
    credentials: Credentials | None = field(default=None, repr=False)
    # the source's proxy for its hosts, and FRONTIER_PROXY_URL (http or https: Scrapy's
    # HttpProxyMiddleware; spider.middlewares.SourceProxyMiddleware chooses per request)
    proxy: ProxyRoute | None = field(default=None, repr=False)
    default_proxy: Proxy | None = field(default=None, repr=False)

    @property
    def uses_heuristic(self) -> bool:
        return self.classifier.rules.uses_heuristic

    def skip_until(self, state: PageState) -> datetime:
        """An unchanged page is not fetched again before this: as long again as it has
        gone unchanged, at most `recrawl_max` (adaptive revisiting)."""
        unchanged_for = max(state.checked_at - state.changed_at, timedelta(0))
        return state.checked_at + min(unchanged_for, self.limits.recrawl_max)


def _start_urls(source: Source, options: SpiderOptions) -> tuple[str, ...]:
    urls = []
    for raw in (source.base_url, *options.listing_urls):
        if not raw:
            continue
        try:
            urls.append(normalize_url(raw, keep_trailing_slash=source.keep_trailing_slash))
        except InvalidURL as exc:
            raise SpiderConfigError(
                f"source {source.name!r}: bad start URL {raw!r}: {exc.reason}"
            ) from None
    if not urls:
        raise SpiderConfigError(
            f"source {source.name!r} has no base_url and no listing URLs to start from"
        )
    return tuple(dict.fromkeys(urls))


def _known_sources(sources: list[Source], own_domain: str) -> dict[str, KnownSource]:
    known: dict[str, KnownSource] = {}
    for other in sorted(sources, key=lambda s: (-s.priority, s.name)):
        if other.name in (MANUAL, DISCOVERED) or not other.enabled:
            continue
        rules: ArticleRules | None = None
        for raw in (other.base_url, other.feed_url, other.sitemap_url):
            if not raw:
                continue
            try:
                key = site_key(url_host(normalize_url(raw)))
            except InvalidURL:
                continue
            if key == own_domain or key in known:
                continue
            if rules is None:
                try:
                    rules = ArticleRules.compile(other.article_url_patterns, other.name)
                except SpiderConfigError:
                    break  # a broken neighbour is skipped, not fatal to this crawl
            known[key] = KnownSource(other.name, other.ref, rules)
    return known


async def load_plan(
    db: Database,
    settings: Settings,
    source_name: str,
    *,
    max_pages: int | None = None,
    max_depth: int | None = None,
    started_at: datetime | None = None,
) -> CrawlPlan:
    sources = SourceRepository(db)
    source = await sources.get(source_name)
    if source.fetchprotection <= 0:
        raise SpiderConfigError(f"source {source.name!r} has fetchprotection 0: no fetching")
    repository = SpiderRepository(db)
    options = await repository.options(source.id)
    start_urls = _start_urls(source, options)
    try:
        credentials = credentials_for(source, *options.listing_urls)
    except CredentialsUnavailable as exc:
        raise SpiderConfigError(f"source {source.name!r}: access: {exc}") from None
    proxy, default_proxy = _proxies(source, settings, options.listing_urls)
    domain = site_key(url_host(start_urls[0]))
    classifier = LinkClassifier(
        domain=domain,
        rules=ArticleRules.compile(source.article_url_patterns, source.name),
        keep_trailing_slash=source.keep_trailing_slash,
        known=_known_sources(await sources.list(), domain),
    )
    discovered = (await sources.get(DISCOVERED)).ref if options.allow_external else None
    limits = CrawlLimits(
        max_pages=max_pages if max_pages is not None else settings.spider_max_pages,
        max_depth=max_depth if max_depth is not None else settings.spider_max_depth,
        recrawl_max=timedelta(hours=settings.spider_recrawl_max_hours),
    )
    if limits.max_pages < 1 or limits.max_depth < 0:
        raise SpiderConfigError("max pages must be at least 1 and max depth at least 0")
    return CrawlPlan(
        source_name=source.name,
        source_id=source.id,
        source=source.ref,
        start_urls=start_urls,
        classifier=classifier,
        limits=limits,
        # As a submit creates a host's row: the source's rate limit, else the default.
        new_host_delay_ms=(
            source.rate_limit_ms if source.rate_limit_ms is not None else settings.default_delay_ms
        ),
        fetchprotection=source.fetchprotection,
        politeness_key=source.politeness_key or settings.politeness_key,
        discovered=discovered,
        pages=await repository.pages(source.id),
        started_at=started_at,
        credentials=credentials,
        proxy=proxy,
        default_proxy=default_proxy,
    )


def _proxies(
    source: Source, settings: Settings, listing_urls: Sequence[str]
) -> tuple[ProxyRoute | None, Proxy | None]:
    """The source's proxy and FRONTIER_PROXY_URL, refused when one is a SOCKS proxy:
    Scrapy speaks only http and https proxies, and a crawl that went direct instead would
    leave from an address the operator did not choose."""
    try:
        route = route_for(source, *listing_urls)
    except CredentialsUnavailable as exc:
        raise SpiderConfigError(f"source {source.name!r}: proxy: {exc}") from None
    try:
        password = password_from(settings.proxy_password_file)
    except CredentialsUnavailable as exc:
        raise SpiderConfigError(str(exc)) from None
    default = Proxy.parse(settings.proxy_url, password=password) if settings.proxy_url else None
    for where, proxy in (
        (f"source {source.name!r}: proxy", route.proxy if route else None),
        ("FRONTIER_PROXY_URL", default),
    ):
        if proxy is not None and proxy.socks:
            raise SpiderConfigError(
                f"{where}: {proxy.label()} is a SOCKS proxy, which the spider (Scrapy) cannot "
                "use: give it an http:// or https:// proxy (the fetchers and the poller use "
                "SOCKS proxies)"
            )
    return route, default
