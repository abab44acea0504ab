"""Phase, jitter, backoff and adaptive intervals as pure functions."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frontier.retry_after import retry_after_s
from poller import intervals

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def test_backoff_sequence_doubles_then_caps_at_a_day() -> None:
    no_jitter = [intervals.backoff_s(900, errors, rand=lambda: 0.0) for errors in range(1, 9)]
    assert no_jitter == [1800, 3600, 7200, 14400, 28800, 57600, 86400, 86400]
    full_jitter = intervals.backoff_s(900, 3, rand=lambda: 1.0)
    assert full_jitter == pytest.approx(7200 * 0.9)


@given(st.integers(0, 60), st.floats(0, 1, exclude_max=True), st.integers(60, 86_400))
def test_backoff_never_exceeds_the_cap(errors: int, r: float, interval: int) -> None:
    delay = intervals.backoff_s(interval, errors, rand=lambda: r)
    assert 0 < delay <= intervals.BACKOFF_CAP_S


@given(st.uuids(), st.integers(1, 86_400 * 7))
def test_phase_is_deterministic_and_within_the_interval(source: uuid.UUID, interval: int) -> None:
    phase = intervals.phase_s(source, interval)
    assert 0 <= phase < interval
    assert phase == intervals.phase_s(source, interval)


def test_phases_spread_sources_over_the_interval() -> None:
    phases = {intervals.phase_s(uuid.UUID(int=i * 7919), 900) // 90 for i in range(500)}
    assert phases == set(range(10))  # every tenth of the interval gets some sources


@given(st.floats(0, 1, exclude_max=True), st.integers(1, 200_000))
def test_jitter_bounds(r: float, interval: int) -> None:
    jitter = intervals.jitter_s(interval, rand=lambda: r)
    cap = min(interval * intervals.JITTER_FRACTION, intervals.JITTER_CAP_S)
    assert 0 <= jitter < max(1e-9, cap)


@given(st.uuids(), st.integers(60, 86_400), st.integers(0, 10**8))
def test_next_poll_lands_on_the_phase_within_jitter(
    source: uuid.UUID, interval: int, offset: int
) -> None:
    now = NOW + timedelta(seconds=offset)
    slot = intervals.next_slot(now, source, interval)
    assert interval / 2 <= (slot - now).total_seconds() <= interval * 1.5 + 1e-6
    assert round(slot.timestamp() - intervals.phase_s(source, interval)) % interval == 0
    nxt = intervals.next_poll_ok(now, source, interval, rand=lambda: 0.999)
    assert slot <= nxt <= slot + timedelta(seconds=intervals.JITTER_CAP_S)


def test_retry_after_wins_when_longer() -> None:
    at = intervals.next_poll_failed(NOW, 60, 1, retry_after_s=3600, rand=lambda: 0)
    assert at == NOW + timedelta(seconds=3600)
    cap = intervals.RETRY_AFTER_CAP_S
    assert retry_after_s("120", NOW, cap_s=cap) == 120
    assert retry_after_s("Tue, 01 Jan 2030 13:00:00 GMT", NOW, cap_s=cap) == 3600
    assert retry_after_s("soon", NOW, cap_s=cap) is None


def test_adaptive_interval_follows_entry_frequency_within_bounds() -> None:
    hourly = [NOW - timedelta(hours=h) for h in range(10)]
    assert intervals.adaptive_interval_s(hourly) == 3600
    every_minute = [NOW - timedelta(minutes=m) for m in range(10)]
    assert intervals.adaptive_interval_s(every_minute) == intervals.ADAPTIVE_MIN_S
    weekly = [NOW - timedelta(days=7 * w) for w in range(5)]
    assert intervals.adaptive_interval_s(weekly) == intervals.ADAPTIVE_MAX_S
    assert intervals.adaptive_interval_s(every_minute, floor_s=1800) == 1800
    assert intervals.adaptive_interval_s([NOW, None]) is None


def test_feed_floor_from_ttl_and_max_age() -> None:
    assert intervals.interval_floor_s("60", {}) == 3600
    assert intervals.interval_floor_s(None, {"Cache-Control": "public, max-age=600"}) == 600
    assert intervals.interval_floor_s("5", {"Cache-Control": "max-age=900"}) == 900
    assert intervals.interval_floor_s("junk", {}) is None


def test_a_hosts_sources_are_ranked_by_id_and_counted_per_host() -> None:
    ids = [uuid.UUID(int=i) for i in (5, 3, 9, 1)]
    spreads = intervals.host_spreads([(ids[0], "a"), (ids[1], "a"), (ids[2], "b"), (ids[3], "a")])

    assert [spreads[ids[i]].rank for i in (3, 1, 0)] == [0, 1, 2]  # ids 1, 3, 5 on a
    assert {spreads[i].count for i in (ids[0], ids[1], ids[3])} == {3}
    assert spreads[ids[2]].rank == 0 and spreads[ids[2]].count == 1
    assert spreads[ids[0]].offset == spreads[ids[1]].offset != spreads[ids[2]].offset


@given(st.floats(0, 1, exclude_max=True), st.integers(0, 10**8))
def test_a_hosts_spread_sources_are_polled_evenly_over_the_interval(r: float, offset: int) -> None:
    """Twelve sources of one host, every minute: one poll every 5 s, each at most a quarter
    of that late (jitter), whoever polled when."""
    now = NOW + timedelta(seconds=offset)
    ids = [uuid.uuid5(uuid.NAMESPACE_URL, f"feed-{i}") for i in range(12)]
    spreads = intervals.host_spreads((i, "news.example") for i in ids)
    polls = sorted(
        intervals.next_poll_ok(now, i, 60, rand=lambda: r, spread=spreads[i]).timestamp() % 60
        for i in ids
    )
    gaps = [(b - a) % 60 for a, b in zip(polls, [*polls[1:], polls[0]], strict=True)]
    assert min(gaps) >= 5 - 1.25 - 1e-6
    assert max(gaps) <= 5 + 1.25 + 1e-6
