"""`PollSummary`: what one poll of one source came to, as the scheduler, `frontier poll`
and `frontier up` report it. `as_json()` is the `frontier poll --once --json` row."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any

log = logging.getLogger("poller")


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
