"""`PollSummary`: what one poll of one source came to, as the scheduler, `frontier poll`
and `frontier up` report it. `as_json()` is the `frontier poll --once --json` row."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class PollSummary:
    source: str  # the source's name
    url: str | None  # the feed or sitemap polled, else the source's own URL
    ok: bool  # no part of the poll failed
    error: str | None  # every part's error, joined with "; "
    items_seen: int
    items_new: int  # URLs new to the frontier
    outcome: str  # the parts' fetch_log outcomes joined with ",", or "skipped"

    def as_json(self) -> dict[str, Any]:
        return asdict(self)
