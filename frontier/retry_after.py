"""The one Retry-After parser (RFC 9110 section 10.2.3), for the poller and the fetcher.

    retry_after_s("120", now, cap_s=86_400)                            -> 120.0
    retry_after_s("Sun, 06 Nov 1994 08:49:37 GMT", now, cap_s=86_400) -> 0.0 (in the past)
    retry_after_s("soon", now, cap_s=86_400)                           -> None

The value is either delta-seconds (ASCII digits only) or an HTTP-date: the IMF-fixdate
form, or the obsolete RFC 850 and asctime forms that recipients must still accept. The
dates are read by `email.utils.parsedate_to_datetime` (the standard library already
reads all three forms; no hand-written date grammar). An HTTP-date is always UTC, so a
date without a zone (the asctime form, or a `-0000` zone) is taken as UTC.

Rules: a date in the past means "now" (0); garbage, a negative number, an empty or
absent header mean "no usable Retry-After" (None); anything further out than the
caller's `cap_s` is clamped to it, since a server cannot park us for ever.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

_DELTA_SECONDS = re.compile(r"[0-9]+")  # 1*DIGIT; str.isdigit() takes "²" too


def retry_after_s(value: str | None, now: datetime, *, cap_s: float) -> float | None:
    """Seconds to wait from `now` (timezone-aware) that a Retry-After `value` asks for,
    in [0, cap_s]; None when the header is absent or unusable."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if _DELTA_SECONDS.fullmatch(value):
        return min(float(value), cap_s)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return min(max((when - now).total_seconds(), 0.0), cap_s)
