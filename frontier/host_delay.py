"""A host's delay between two requests, and how the doubling after a 429/503 wears off,
as pure functions. The database holds the same rules: `host_delay_ms` is the generated
column `host_state.delay_ms` (migration 0009) and `slowdown_after` is the `slowdown` /
`good_answers` update of queue.sql `complete`; tests/integration/test_host_delay.py keeps
each pair in step.

    host_delay_ms(crawl_delay_ms=None, source_delay_ms=None, min_delay_ms=1000, slowdown=0)
        -> 1000 (the default, set when the host was first seen)
    host_delay_ms(crawl_delay_ms=3000, source_delay_ms=5000, min_delay_ms=1000, slowdown=0)
        -> 5000 (the largest of robots.txt's Crawl-delay and the sources' rate limit)
    host_delay_ms(crawl_delay_ms=None, source_delay_ms=None, min_delay_ms=1000, slowdown=2)
        -> 4000 (two 429s not yet worn off)

The slowdown: each 429/503 doubles the delay (one step, at most SLOWDOWN_MAX, never past
DELAY_CAP_MS; a host without delay starts from SLOWED_FLOOR_MS); every
RECOVERY_ANSWERS good answers in a row (2xx, 3xx, 304, 404, 410: the server answered
without pushing back) take one step off, halving the delay back towards normal. A 5xx,
timeout or bot wall neither adds nor removes a step; a 429/503 restarts the count. So a
host that was doubled once is back to its normal delay after ten good answers, which at
the doubled delay is a while, not at once.
"""

from __future__ import annotations

SLOWDOWN_MAX = 7  # 2**7 times the delay: past the cap for any delay of 500 ms or more
SLOWED_FLOOR_MS = 500  # a slowed-down host waits at least this, even if its delay is 0
DELAY_CAP_MS = 60_000  # doubling never takes a delay past a minute
RECOVERY_ANSWERS = 10  # good answers in a row that take one doubling off


def host_delay_ms(
    *, crawl_delay_ms: int | None, source_delay_ms: int | None, min_delay_ms: int, slowdown: int
) -> int:
    """The host's delay: the largest of its robots.txt Crawl-delay (already capped) and
    its sources' rate limit (`source_delay_ms`; the default `min_delay_ms` stands in when
    none of its sources sets one), doubled `slowdown` times."""
    base = max(crawl_delay_ms or 0, min_delay_ms if source_delay_ms is None else source_delay_ms)
    if slowdown <= 0:
        return base
    steps = min(slowdown, SLOWDOWN_MAX)
    slowed = max(base << steps, SLOWED_FLOOR_MS << (steps - 1))
    return max(base, min(DELAY_CAP_MS, slowed))


def slowdown_after(
    slowdown: int, good_answers: int, *, answered: int, rate_limited: bool
) -> tuple[int, int]:
    """(slowdown, good_answers) after a batch of completions on one host: `answered` good
    answers, and whether any was a 429/503."""
    if rate_limited:
        return min(slowdown + 1, SLOWDOWN_MAX), 0
    if slowdown == 0 or answered <= 0:
        return slowdown, good_answers
    total = good_answers + answered
    left = max(slowdown - total // RECOVERY_ANSWERS, 0)
    return left, (total % RECOVERY_ANSWERS if left else 0)
