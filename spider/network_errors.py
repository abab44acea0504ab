"""Ordinary network failures logged by Scrapy as one line, not a traceback.

Scrapy's robots.txt middleware logs a failed robots.txt download at ERROR with the
exception's traceback (60 lines for a DNS failure). A DNS failure, a refused connection or
a timeout is the site's state, not a bug: `QuietNetworkErrors` drops the traceback of such
a record (keeping its one-line message, which names the cause) unless the crawl logs at
DEBUG. Any other exception keeps its traceback.
"""

from __future__ import annotations

import logging

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
)
from twisted.internet.error import ConnectError, DNSLookupError, TimeoutError

NETWORK_ERRORS = (
    CannotResolveHostError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    ConnectError,
    DNSLookupError,
    TimeoutError,
)
# The loggers that attach a traceback to a failed download.
SCRAPY_LOGGERS = ("scrapy.downloadermiddlewares.robotstxt", "scrapy.core.scraper")


class QuietNetworkErrors(logging.Filter):
    """Drops the traceback of a network failure's record (the record itself stays)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, NETWORK_ERRORS):
            record.exc_info = None
            record.exc_text = None
        return True


def quiet_network_errors(log_level: str) -> None:
    """Install the filter on the loggers that print a download's traceback, unless the
    crawl logs at DEBUG (Scrapy sets its handler's level, so the job's level is passed)."""
    if log_level.upper() == "DEBUG":
        return
    for name in SCRAPY_LOGGERS:
        logging.getLogger(name).addFilter(QuietNetworkErrors())
