"""What a poll of one source came to: `PartOutcome`, the base of each part's outcome (the
part polled through the source's kind, `poll.KindOutcome`, and the source's own
sitemaps, `sitemaps.SitemapOutcome`), and `PollSummary`, the parts together as the
scheduler, `frontier poll` and `frontier up` report it (`as_json()` is the
`frontier poll --once --json` row)."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any

from frontier.parse_pool import ParseLimitExceeded
from frontier.safe_http.errors import BlockedAddress, HttpError, PolicyBlocked, ProxyError
from frontier.sources import Source
from frontier.states import LogOutcome
from poller.errors import DocumentRefused
from poller.poll_state import PollState

log = logging.getLogger("poller")

SUCCEEDED = frozenset({LogOutcome.OK, LogOutcome.OK_NO_NEW, LogOutcome.NOT_MODIFIED})
# What ends one part of a poll without crashing it (`PartOutcome.ended_by`)
PollFailure = HttpError | DocumentRefused | ParseLimitExceeded
POLL_FAILURES = (HttpError, DocumentRefused, ParseLimitExceeded)


@dataclass(slots=True)
class PartOutcome:
    source: Source
    state: PollState  # the state to write
    url: str | None  # what this part polled (None: nothing was polled, nothing logged)
    outcome: LogOutcome | None  # None: skipped, nothing to log
    items_seen: int = 0
    items_new: int = 0
    http_status: int | None = None
    error: str | None = None
    elapsed_ms: int = 0
    retry_after_s: float | None = None  # 429/503 Retry-After
    proxy_failed: bool = False  # ended by its proxy's failure (frontier.proxies)

    @property
    def failed(self) -> bool:
        return self.outcome is not None and self.outcome not in SUCCEEDED

    def ended_by(self, exc: PollFailure, what: str) -> None:
        """Record what ended this part: refused by the SSRF guard or policy, a request
        that failed, or `what` (the document polled) unusable."""
        self.proxy_failed = isinstance(exc, ProxyError)
        if isinstance(exc, (BlockedAddress, PolicyBlocked)):
            self.outcome, self.error = LogOutcome.REFUSED, str(exc)
        elif isinstance(exc, HttpError):
            self.outcome, self.error = LogOutcome.FAILED, str(exc)
        else:
            self.outcome, self.error = LogOutcome.FAILED, f"unusable {what}: {exc}"


@dataclass(frozen=True, slots=True)
class PollSummary:
    source: str  # the source's name
    url: str | None  # the feed or sitemap polled, else the source's own URL
    ok: bool  # no part of the poll failed
    error: str | None  # every part's error, joined with "; "
    items_seen: int
    items_new: int  # URLs new to the frontier
    outcome: str  # the parts' fetch_log outcomes joined with ",", or "skipped"
    elapsed_ms: int = 0  # the parts' request time

    def as_json(self) -> dict[str, Any]:
        """The `--json` row, keys as before (the time is in the log line, not here)."""
        row = asdict(self)
        del row["elapsed_ms"]
        return row

    def log(self) -> None:
        """One log line for this poll: INFO when it worked, WARNING with the cause first
        when it failed (`poll failed: <cause> (source S, URL)`); the fields go with it
        (`FRONTIER_LOG_FORMAT=json` prints them)."""
        fields = {
            "source": self.source,
            "url": self.url,
            "outcome": self.outcome,
            "items_seen": self.items_seen,
            "items_new": self.items_new,
            "elapsed_ms": self.elapsed_ms,
        }
        if self.ok:
            log.info(
                "polled %s: %s, seen %d, new %d, %d ms (%s)",
                self.source,
                self.outcome,
                self.items_seen,
                self.items_new,
                self.elapsed_ms,
                self.url,
                extra=fields,
            )
        else:
            log.warning(
                "poll failed: %s (source %s, %s)",
                self.error,
                self.source,
                self.url,
                extra=fields | {"error": self.error},
            )
