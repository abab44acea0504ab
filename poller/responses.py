"""What the HTTP answer to a poll means, as a small pure object shared by feeds (`poll`)
and sitemaps (`sitemaps`): `decide(status, headers, now)` returns a frozen
`ResponseDecision`, tested without I/O (modelled on Miniflux's `response_handler.go`).

| status      | verdict        | fetch_log outcome | then                                     |
|-------------|----------------|-------------------|------------------------------------------|
| 2xx         | `PARSE`        | ok                | parse the body                           |
| 304         | `NOT_MODIFIED` | not_modified      | keep the cursor, refresh the validators  |
| 410         | `GONE`         | gone              | a feed disables its source               |
| 404         | `NOT_FOUND`    | not_found         | back off                                 |
| 429, 503    | `RATE_LIMITED` | rate_limited      | back off, at least until Retry-After     |
| anything else | `FAILED`     | failed            | back off                                 |

Redirects are followed by the client; when every hop was permanent (301/308) the final
URL comes in as `redirected_to` and leaves as `moved_to`, normalised (None if unusable).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from frontier.retry_after import retry_after_s
from frontier.states import LogOutcome
from frontier.urls import InvalidURL, normalize_url
from poller.intervals import RETRY_AFTER_CAP_S

RATE_LIMIT_STATUSES = frozenset({429, 503})


class Verdict(StrEnum):
    PARSE = "parse"  # 2xx: read the body
    NOT_MODIFIED = "not_modified"  # 304: nothing changed since our validators
    GONE = "gone"  # 410: gone for good
    NOT_FOUND = "not_found"  # 404
    RATE_LIMITED = "rate_limited"  # 429/503: the server asks us to come back later
    FAILED = "failed"  # any other status: retried with backoff


_OUTCOMES = {
    Verdict.PARSE: LogOutcome.OK,  # OK or OK_NO_NEW once the entries are submitted
    Verdict.NOT_MODIFIED: LogOutcome.NOT_MODIFIED,
    Verdict.GONE: LogOutcome.GONE,
    Verdict.NOT_FOUND: LogOutcome.NOT_FOUND,
    Verdict.RATE_LIMITED: LogOutcome.RATE_LIMITED,
    Verdict.FAILED: LogOutcome.FAILED,
}


@dataclass(frozen=True, slots=True)
class ResponseDecision:
    verdict: Verdict
    status: int
    retry_after_s: float | None = None  # RATE_LIMITED: Retry-After, capped; else None
    moved_to: str | None = None  # every redirect followed was permanent: the new URL

    @property
    def outcome(self) -> LogOutcome:
        return _OUTCOMES[self.verdict]

    @property
    def failed(self) -> bool:
        """True when there is no body to read and the poll counts as an error."""
        return self.verdict not in (Verdict.PARSE, Verdict.NOT_MODIFIED)

    @property
    def error(self) -> str | None:
        if not self.failed:
            return None
        if self.verdict is Verdict.GONE:
            return f"HTTP {self.status} Gone"
        return f"HTTP {self.status}"


def decide(
    status: int, headers: Mapping[str, str], now: datetime, *, redirected_to: str | None = None
) -> ResponseDecision:
    """The decision for one poll response; `now` dates a Retry-After given as a date."""
    moved_to = _normalised(redirected_to)
    if status == 304:
        return ResponseDecision(Verdict.NOT_MODIFIED, status, moved_to=moved_to)
    if 200 <= status < 300:
        return ResponseDecision(Verdict.PARSE, status, moved_to=moved_to)
    if status == 410:
        return ResponseDecision(Verdict.GONE, status, moved_to=moved_to)
    if status == 404:
        return ResponseDecision(Verdict.NOT_FOUND, status, moved_to=moved_to)
    if status in RATE_LIMIT_STATUSES:
        wait = retry_after_s(headers.get("Retry-After"), now, cap_s=RETRY_AFTER_CAP_S)
        return ResponseDecision(Verdict.RATE_LIMITED, status, wait, moved_to)
    return ResponseDecision(Verdict.FAILED, status, moved_to=moved_to)


def _normalised(url: str | None) -> str | None:
    if not url:
        return None
    try:
        return normalize_url(url, keep_trailing_slash=True)
    except InvalidURL:
        return None
