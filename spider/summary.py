"""A crawl's summary: what one spider run did, printed by the CLI (and as JSON with
`--json`), stored in `spider_state.last_summary` and in the fetch log. The crawl process
prints it as one JSON line (`as_json`); the parent reads it back (`from_json`)."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from frontier.states import LogOutcome

log = logging.getLogger("spider")
LAST_ERROR = "frontier/last_error"  # the stats key of the last page failure's cause


@dataclass(slots=True)
class CrawlSummary:
    source: str
    pages_crawled: int = 0  # requests answered (304s included)
    articles_found: int = 0  # distinct URLs submitted to the frontier
    new_urls: int = 0  # of those, new to the frontier
    external_links: int = 0  # distinct links to hosts of no known source
    errors: int = 0  # pages that failed (HTTP errors, timeouts) and writes that failed
    elapsed_s: float = 0.0
    pages_unchanged: int = 0
    pages_skipped: int = 0
    pages_not_html: int = 0
    pages_nofollow: int = 0  # pages whose robots rules say nofollow: no link followed
    known_source_links: int = 0
    external_queued: int = 0
    robots_blocked: int = 0
    blocked: int = 0  # refused by the SSRF guard
    submit_errors: int = 0
    start_pages_failed: int = 0  # start pages that could not be used: the run failed
    host_backoff: int = 0  # not requested: the host backs off after a 429/503
    proxy_errors: int = 0  # the proxy failed (not the site): tried again next crawl
    slot_wait_s: float = 0.0  # waiting for hosts' slots (their delay, shared with fetchers)
    budget_exhausted: bool = False
    classification: str = "patterns"  # or "heuristic": the source has no article patterns
    crawl_s: float = 0.0  # Scrapy's own elapsed time (no process start, no database setup)
    http_statuses: dict[str, int] = field(default_factory=dict)
    error: str | None = None  # why the run did not happen or stopped
    last_error: str | None = None  # the cause of the last page that failed, then its URL

    @classmethod
    def from_stats(cls, source: str, stats: dict[str, Any], heuristic: bool) -> CrawlSummary:
        def n(key: str) -> int:
            return int(stats.get(f"frontier/{key}", 0))

        statuses = {
            key.rsplit("/", 1)[1]: int(value)
            for key, value in stats.items()
            if key.startswith("frontier/http_status/")
        }
        return cls(
            source=source,
            pages_crawled=n("pages_crawled"),
            articles_found=n("articles_found"),
            new_urls=n("new_urls"),
            external_links=n("external_links"),
            errors=n("errors") + n("submit_errors"),
            pages_unchanged=n("pages_unchanged"),
            pages_skipped=n("pages_skipped"),
            pages_not_html=n("pages_not_html"),
            pages_nofollow=n("pages_nofollow"),
            known_source_links=n("known_source_links"),
            external_queued=n("external_queued"),
            robots_blocked=n("robots_blocked"),
            blocked=n("blocked"),
            submit_errors=n("submit_errors"),
            start_pages_failed=n("start_pages_failed"),
            host_backoff=n("host_backoff"),
            proxy_errors=n("proxy_errors"),
            slot_wait_s=round(n("slot_wait_ms") / 1000, 3),
            budget_exhausted=n("budget_exhausted") > 0,
            classification="heuristic" if heuristic else "patterns",
            crawl_s=round(float(stats.get("elapsed_time_seconds", 0.0)), 3),
            http_statuses=statuses,
            last_error=stats.get(LAST_ERROR),
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CrawlSummary:
        """The summary `as_json` printed (its derived `outcome` and unknown keys ignored)."""
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in known})

    @property
    def outcome(self) -> LogOutcome:
        if self.error is not None or (
            self.pages_crawled == 0 and (self.errors or self.proxy_errors)
        ):
            return LogOutcome.FAILED
        if self.pages_crawled == 0 and (self.blocked or self.robots_blocked):
            return LogOutcome.BLOCKED
        if self.start_pages_failed and not self.new_urls:  # a start page failed, nothing found
            return LogOutcome.FAILED
        return LogOutcome.OK if self.new_urls else LogOutcome.OK_NO_NEW

    @property
    def failed(self) -> bool:
        """Whether the run failed (exit 1): it did not happen, a start page could not be
        used (unreachable, an HTTP error, refused, disallowed, the host backing off), or
        found URLs could not be written. A crawl that went through is not a failure for
        the dead links it met on the way (they are counted in `errors`), so a cron job
        does not report every 404 of a site."""
        return self.error is not None or self.start_pages_failed > 0 or self.submit_errors > 0

    @property
    def cause(self) -> str | None:
        """What went wrong, in words: why the run stopped, else the last page failure."""
        return self.error or self.last_error

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "outcome": str(self.outcome)}

    def log(self) -> None:
        """One log line for this run: INFO when it went through, WARNING with the cause
        first when it failed (`spider run failed: <cause> (source S)`)."""
        fields = {
            "source": self.source,
            "outcome": str(self.outcome),
            "pages_crawled": self.pages_crawled,
            "articles_found": self.articles_found,
            "new_urls": self.new_urls,
            "errors": self.errors,
            "elapsed_ms": int(self.elapsed_s * 1000),
        }
        if self.failed:
            log.warning(
                "spider run failed: %s (source %s)",
                self.cause or "see the crawl's log",
                self.source,
                extra=fields | {"error": self.cause},
            )
            return
        log.info(
            "spider run %s: %s, %d pages, %d articles, %d new, %d errors, %.1f s",
            self.source,
            self.outcome,
            self.pages_crawled,
            self.articles_found,
            self.new_urls,
            self.errors,
            self.elapsed_s,
            extra=fields,
        )

    def render(self) -> str:
        lines = [
            f"{self.source}: {self.pages_crawled} pages crawled, {self.articles_found} article "
            f"URLs found, {self.new_urls} new, {self.external_links} external links, "
            f"{self.errors} errors, {self.elapsed_s:.1f} s",
        ]
        extra = [
            f"{self.pages_unchanged} unchanged",
            f"{self.pages_skipped} skipped (unchanged)",
            f"{self.robots_blocked} disallowed by robots.txt",
            f"{self.blocked} blocked",
            f"{self.known_source_links} to other sources",
            f"{self.external_queued} external queued",
        ]
        if self.pages_nofollow:
            extra.append(f"{self.pages_nofollow} nofollow (links not followed)")
        if self.host_backoff:
            extra.append(f"{self.host_backoff} not requested (the host backs off)")
        if self.proxy_errors:
            extra.append(f"{self.proxy_errors} proxy errors (tried again next crawl)")
        lines.append("  " + ", ".join(extra))
        if self.classification == "heuristic":
            lines.append("  no article_url_patterns: articles recognised by the heuristic")
        if self.start_pages_failed:
            lines.append(f"  {self.start_pages_failed} start pages failed: the run failed")
        if self.submit_errors:
            lines.append(f"  {self.submit_errors} URLs could not be written: the run failed")
        if self.budget_exhausted:
            lines.append("  stopped at the page budget")
        if self.error:
            lines.append(f"  error: {self.error}")
        elif self.last_error and (self.errors or self.start_pages_failed):
            lines.append(f"  last error: {self.last_error}")
        return "\n".join(lines)
