"""Retry delays as pure functions: exponential in the attempt number, capped, with jitter.
`rand` is injectable so tests can pin the jitter."""

from __future__ import annotations

import random
from collections.abc import Callable

RETRY_BASE_S = 60.0  # the first retry waits about a minute
RETRY_CAP_S = 6 * 3600.0  # no retry waits longer than six hours
JITTER = 0.2  # +-20%, so URLs that failed together do not retry together


def retry_delay(
    attempt: int,
    *,
    base_s: float = RETRY_BASE_S,
    cap_s: float = RETRY_CAP_S,
    jitter: float = JITTER,
    rand: Callable[[], float] = random.random,
) -> float:
    """Seconds to wait before retry number `attempt` (1 for the first retry)."""
    exponent = min(max(attempt - 1, 0), 60)
    delay = min(cap_s, base_s * 2.0**exponent)
    return delay * (1.0 - jitter + 2.0 * jitter * rand())
