"""The spider's exceptions (the tree is drawn in `spider/__init__.py`). An address the
SSRF guard refuses raises the safe client's own `frontier.safe_http.errors.BlockedAddress`."""

from frontier.errors import FrontierError


class SpiderError(FrontierError):
    """Root of the spider's errors."""


class SpiderConfigError(SpiderError, ValueError):
    """Permanent: a source the spider cannot run (no base URL, a bad pattern, fetching
    forbidden by fetchprotection 0, a bad option). Fix the source, then run again."""


class CrawlFailed(SpiderError):
    """Retryable: the crawl process died or answered nothing usable; the next run retries."""
