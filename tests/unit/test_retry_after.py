"""The one Retry-After parser: delta-seconds and the three HTTP-date forms, clamped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frontier.retry_after import retry_after_s

NOW = datetime(1994, 11, 6, 8, 48, 37, tzinfo=UTC)  # a minute before the RFC's example
DAY = 86_400.0


@pytest.mark.parametrize("value", ["0", "120", " 120 ", "007"])
def test_delta_seconds(value: str) -> None:
    assert retry_after_s(value, NOW, cap_s=DAY) == float(int(value))


@pytest.mark.parametrize(
    "value",
    [
        "Sun, 06 Nov 1994 08:49:37 GMT",  # IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  # obsolete RFC 850
        "Sun Nov  6 08:49:37 1994",  # obsolete asctime: no zone, HTTP-dates are UTC
        "Sun, 06 Nov 1994 08:49:37 -0000",  # "unknown zone" is read as UTC as well
    ],
)
def test_http_dates_in_every_form(value: str) -> None:
    assert retry_after_s(value, NOW, cap_s=DAY) == 60.0


def test_a_date_with_an_offset_is_converted() -> None:
    assert retry_after_s("Sun, 06 Nov 1994 09:49:37 +0100", NOW, cap_s=DAY) == 60.0


def test_a_date_in_the_past_means_now() -> None:
    assert retry_after_s("Sat, 05 Nov 1994 08:49:37 GMT", NOW, cap_s=DAY) == 0.0
    assert retry_after_s("Thu, 01 Jan 1970 00:00:00 GMT", NOW, cap_s=DAY) == 0.0


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "   ",
        "soon",
        "-5",
        "-0",
        "+5",
        "1.5",
        "1e3",
        "0x10",
        "²",
        "١٢٣",
        "120 s",
        "Sun, 32 Nov 1994 08:49:37 GMT",
        "Fri, 31 Dec 99999 00:00:00 GMT",
    ],
)
def test_garbage_and_negative_values_are_not_usable(value: str | None) -> None:
    assert retry_after_s(value, NOW, cap_s=DAY) is None


def test_huge_values_are_clamped_to_the_callers_cap() -> None:
    assert retry_after_s("99999999", NOW, cap_s=DAY) == DAY
    assert retry_after_s("9" * 400, NOW, cap_s=DAY) == DAY  # float("9" * 400) is inf
    assert retry_after_s("Fri, 31 Dec 9999 23:59:59 GMT", NOW, cap_s=DAY) == DAY
    assert retry_after_s("99999999", NOW, cap_s=7 * DAY) == 7 * DAY


def test_now_in_another_zone_is_the_same_instant() -> None:
    paris = NOW.astimezone(timezone(timedelta(hours=1)))
    assert retry_after_s("Sun, 06 Nov 1994 08:49:37 GMT", paris, cap_s=DAY) == 60.0


@given(st.integers(0, 10**12), st.floats(0, 10**9))
def test_delta_seconds_is_always_within_zero_and_the_cap(seconds: int, cap: float) -> None:
    wait = retry_after_s(str(seconds), NOW, cap_s=cap)
    assert wait is not None and 0.0 <= wait <= cap


@given(st.text(max_size=40))
def test_any_text_gives_none_or_a_wait_within_the_cap(value: str) -> None:
    wait = retry_after_s(value, NOW, cap_s=DAY)
    assert wait is None or 0.0 <= wait <= DAY
