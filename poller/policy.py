"""The poller's knobs, built once from settings and passed down as one value."""

from __future__ import annotations

from dataclasses import dataclass, field

from frontier.parse_pool import ParseLimits
from frontier.settings import Settings
from poller.kinds import Retry
from poller.sitemap_parse import Budget
from poller.sitemap_walk import MAX_DEPTH

FIRE_RATE_LIMIT_S = 60.0  # a source may be fired for real once a minute


@dataclass(frozen=True, slots=True)
class WebSubPolicy:
    """WebSub (poller.websub): off without a public URL for the API's callback."""

    public_url: str | None = None  # FRONTIER_PUBLIC_URL
    poll_s: float = 3600.0  # the fallback poll of a feed whose subscription is active
    lease_s: int = 10 * 86_400  # asked of the hub, which decides
    renew_before_s: float = 3600.0  # renew this long before the lease ends (at most half)
    retry_s: float = 3600.0  # a request the hub never verified is sent again after this
    tick_s: float = 5.0  # the loop's look when no NOTIFY woke it
    batch: int = 50  # notifications applied, requests sent, per look

    @property
    def enabled(self) -> bool:
        return bool(self.public_url)


@dataclass(frozen=True, slots=True)
class PollPolicy:
    tick_s: float = 30.0
    concurrency: int = 32  # polls in flight in one process (most wait for their host)
    per_host: int = 2  # polls in flight per host (or proxy host + first path segment)
    proxy_hosts: tuple[str, ...] = ()
    lease_s: float = 300.0
    sitemap_interval_s: float = 6 * 3600.0
    sitemap_window_s: float = 48 * 3600.0  # sitemap URLs modified longer ago are skipped
    discovery_retry_s: float = 24 * 3600.0  # a site with no feed found is retried after this
    max_document_bytes: int = 10 * 1024 * 1024  # the kind's document (a feed...)
    max_sitemap_bytes: int = 50 * 1024 * 1024
    max_sitemap_depth: int = MAX_DEPTH  # index -> index -> index -> urlset
    max_sitemap_files: int = 50  # documents read per sitemap poll
    # What one sitemap poll reads over all its files (each file: `sitemap_parse.Budget()`)
    max_poll_inflated_bytes: int = 200 * 1024 * 1024
    max_poll_elements: int = 5_000_000
    max_poll_urls: int = 250_000
    parse: ParseLimits = field(default_factory=ParseLimits)  # each parse's limits
    error_log_threshold: int = 10  # consecutive errors before logging at error level
    fire_rate_limit_s: float = FIRE_RATE_LIMIT_S
    retry: Retry = field(default_factory=Retry)  # in-poll retries (tests: no backoff)
    websub: WebSubPolicy = field(default_factory=WebSubPolicy)

    @classmethod
    def from_settings(cls, settings: Settings) -> PollPolicy:
        return cls(
            tick_s=settings.poll_tick_s,
            concurrency=settings.poll_concurrency,
            per_host=settings.poll_per_host,
            proxy_hosts=tuple(
                h.strip().lower() for h in settings.poll_proxy_hosts.split(",") if h.strip()
            ),
            lease_s=float(settings.lease_seconds),
            sitemap_interval_s=settings.sitemap_interval_minutes * 60.0,
            sitemap_window_s=settings.sitemap_window_hours * 3600.0,
            max_poll_inflated_bytes=settings.poll_max_inflated_mb * 1024 * 1024,
            max_poll_elements=settings.poll_max_elements,
            max_poll_urls=settings.poll_max_urls,
            parse=ParseLimits.from_settings(settings),
            websub=WebSubPolicy(
                public_url=settings.public_url,
                poll_s=settings.websub_poll_minutes * 60.0,
                lease_s=settings.websub_lease_seconds,
            ),
        )

    def poll_budget(self) -> Budget:
        """What one sitemap poll may read, over all its files."""
        return Budget(self.max_poll_inflated_bytes, self.max_poll_elements, self.max_poll_urls)
