"""The poller's exceptions; the tree is drawn in the package docstring."""

from __future__ import annotations

from typing import Any

from frontier.errors import FrontierError, RetryLater
from poller.renamed import old_name


class PollerError(FrontierError):
    """Root of the poller's errors."""


class DocumentRefused(PollerError):
    """Permanent for this document: hostile XML, not a feed, or otherwise unusable."""


class SitemapRefused(DocumentRefused):
    """A sitemap that cannot be used: corrupt gzip, not a sitemap, hostile XML."""


class DocumentUnavailable(PollerError):
    """Retryable: the server failed, timed out, or asked us to come back later."""

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class FireRateLimited(PollerError, RetryLater):
    """A real fire of this source happened less than the rate limit ago."""


class SourceBusy(FireRateLimited):
    """The source is being polled right now (its poll lease is held)."""


def __getattr__(name: str) -> Any:  # the old names of the plugin interface (renamed.py)
    return old_name(__name__, globals(), name)
