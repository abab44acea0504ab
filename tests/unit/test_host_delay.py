"""The host delay rules (frontier/host_delay.py), pure: the largest of Crawl-delay and the
sources' rate limit, doubled per 429/503, and the doubling wearing off."""

from __future__ import annotations

import pytest

from frontier.host_delay import (
    DELAY_CAP_MS,
    RECOVERY_ANSWERS,
    SLOWDOWN_MAX,
    host_delay_ms,
    slowdown_after,
)


@pytest.mark.parametrize(
    ("crawl", "source", "default", "slowdown", "expected"),
    [
        (None, None, 1000, 0, 1000),  # nothing set: the default
        (None, 0, 1000, 0, 0),  # one's own host: a rate limit of 0 wins over the default
        (None, 5000, 1000, 0, 5000),
        (3000, 2000, 1000, 0, 3000),  # the largest of Crawl-delay and the rate limit
        (2000, 5000, 1000, 0, 5000),
        (500, None, 1000, 0, 1000),  # a short Crawl-delay does not go below the default
        (None, None, 1000, 1, 2000),  # doubled once
        (None, None, 1000, 3, 8000),
        (None, 0, 1000, 1, 500),  # a host without delay starts from the floor
        (None, 0, 1000, 2, 1000),
        (None, None, 40_000, 1, DELAY_CAP_MS),  # never past the cap by doubling
        (90_000, None, 1000, 2, 90_000),  # but never below the host's own delay
        (None, None, 1000, SLOWDOWN_MAX, DELAY_CAP_MS),
    ],
)
def test_host_delay(
    crawl: int | None, source: int | None, default: int, slowdown: int, expected: int
) -> None:
    got = host_delay_ms(
        crawl_delay_ms=crawl, source_delay_ms=source, min_delay_ms=default, slowdown=slowdown
    )
    assert got == expected


def test_a_429_doubles_and_restarts_the_count() -> None:
    assert slowdown_after(0, 0, answered=3, rate_limited=True) == (1, 0)
    assert slowdown_after(2, 7, answered=1, rate_limited=True) == (3, 0)
    assert slowdown_after(SLOWDOWN_MAX, 0, answered=0, rate_limited=True) == (SLOWDOWN_MAX, 0)


def test_good_answers_take_one_doubling_off_per_recovery_run() -> None:
    state = (2, 0)
    for _ in range(RECOVERY_ANSWERS - 1):
        state = slowdown_after(*state, answered=1, rate_limited=False)
    assert state == (2, RECOVERY_ANSWERS - 1)  # not yet
    state = slowdown_after(*state, answered=1, rate_limited=False)
    assert state == (1, 0)
    state = slowdown_after(*state, answered=RECOVERY_ANSWERS + 3, rate_limited=False)
    assert state == (0, 0)  # back to normal; the extra answers are not banked


def test_failures_and_no_answers_change_nothing() -> None:
    assert slowdown_after(2, 4, answered=0, rate_limited=False) == (2, 4)
    assert slowdown_after(0, 0, answered=50, rate_limited=False) == (0, 0)
