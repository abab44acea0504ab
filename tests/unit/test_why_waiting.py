"""The why-not-fetched sentence: one pure function of the URL's row, its host's row and a
pinned `now`, one test per cause (frontier.why_waiting)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from frontier.states import CANONICAL_DUPLICATE, CONTENT_DUPLICATE
from frontier.why_waiting import Cause, why_host_waits, why_url_waits

NOW = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)
LATER = NOW + timedelta(minutes=10)
EARLIER = NOW - timedelta(minutes=10)


def url(**changes: Any) -> dict[str, Any]:
    row = {
        "url": "https://news.example/a",
        "host": "news.example",
        "status": "pending",
        "next_fetch_at": EARLIER,
        "retry_count": 0,
        "last_error": None,
        "claimed_by": None,
        "lease_until": None,
        "dead_reason": None,
        "http_status": None,
        "final_url": None,
        "last_fetched_at": None,
    }
    return {**row, **changes}


def host(**changes: Any) -> dict[str, Any]:
    row = {
        "host": "news.example",
        "next_allowed_at": EARLIER,
        "delay_ms": 1000,
        "backoff_until": None,
        "consecutive_failures": 0,
        "robots_status": "ok",
        "robots_retry_at": None,
        "robots_error": None,
        "robots_http_status": 200,
        "lease_owner": None,
        "lease_until": None,
        "pending_count": 1,
        "pending_due_at": EARLIER,
    }
    return {**row, **changes}


def test_due_now_waits_for_a_fetcher() -> None:
    why = why_url_waits(url(), host(), now=NOW, robots_allows=True)
    assert why.cause is Cause.DUE_NOW and why.until is None


def test_host_delay_until_next_allowed_at() -> None:
    why = why_url_waits(url(), host(next_allowed_at=LATER), now=NOW, robots_allows=True)
    assert why.cause is Cause.HOST_DELAY and why.until == LATER
    assert "2026-11-24T08:10:00+00:00" in why.sentence and "1000 ms" in why.sentence


def test_key_busy_names_the_key_and_why() -> None:
    snoozed = {"next_allowed_at": LATER, "busy_key": "zoo.blogspot.com"}
    in_flight = host(**snoozed, key_lease_until=LATER, key_next_allowed_at=EARLIER)
    why = why_url_waits(url(), in_flight, now=NOW, robots_allows=True)
    assert why.cause is Cause.KEY_BUSY and why.until == LATER
    assert "another host of key zoo.blogspot.com has a request in flight" in why.sentence
    delayed = host(**snoozed, key_lease_until=None, key_next_allowed_at=LATER)
    why = why_host_waits(delayed, now=NOW)
    assert why.cause is Cause.KEY_BUSY
    assert "the delay of key zoo.blogspot.com runs until" in why.sentence
    # A snooze that has run out says nothing; the host's own delay is named.
    passed = host(next_allowed_at=LATER, busy_key="zoo.blogspot.com")
    assert why_url_waits(url(), passed, now=LATER, robots_allows=True).cause is Cause.DUE_NOW
    assert why_url_waits(url(), host(next_allowed_at=LATER), now=NOW).cause is Cause.HOST_DELAY


def test_host_backing_off_after_failures() -> None:
    why = why_url_waits(
        url(), host(backoff_until=LATER, consecutive_failures=4), now=NOW, robots_allows=True
    )
    assert why.cause is Cause.HOST_BACKOFF and why.until == LATER
    assert "after 4 failed" in why.sentence


def test_the_cause_that_ends_last_is_named() -> None:
    much_later = LATER + timedelta(hours=1)
    why = why_url_waits(
        url(next_fetch_at=LATER),
        host(backoff_until=much_later, next_allowed_at=LATER),
        now=NOW,
        robots_allows=True,
    )
    assert why.cause is Cause.HOST_BACKOFF and why.until == much_later


def test_robots_disallows_outranks_waiting() -> None:
    why = why_url_waits(url(), host(next_allowed_at=LATER), now=NOW, robots_allows=False)
    assert why.cause is Cause.ROBOTS_DISALLOWS and "robots_blocked" in why.sentence


def test_robots_unreachable_until_retried() -> None:
    why = why_url_waits(
        url(),
        host(
            robots_status="disallow_all",
            robots_retry_at=LATER,
            robots_error="timed out",
            robots_http_status=None,
        ),
        now=NOW,
    )
    assert why.cause is Cause.ROBOTS_UNREACHABLE and why.until == LATER
    assert "timed out" in why.sentence


def test_robots_not_fetched_yet() -> None:
    why = why_url_waits(url(), host(robots_status="unknown"), now=NOW)
    assert why.cause is Cause.ROBOTS_NOT_FETCHED
    assert why_url_waits(url(), None, now=NOW).cause is Cause.ROBOTS_NOT_FETCHED


def test_host_leased_while_its_robots_txt_is_fetched() -> None:
    why = why_url_waits(
        url(), host(lease_owner="w-7", lease_until=LATER, robots_status="unknown"), now=NOW
    )
    assert why.cause is Cause.HOST_LEASED and "w-7" in why.sentence


def test_url_leased_by_a_fetcher() -> None:
    why = why_url_waits(
        url(status="fetching", claimed_by="w-3", lease_until=LATER), host(), now=NOW
    )
    assert why.cause is Cause.LEASED and "w-3" in why.sentence and why.until == LATER


def test_lease_expired_awaits_the_reaper() -> None:
    why = why_url_waits(
        url(status="fetching", claimed_by="w-3", lease_until=EARLIER), host(), now=NOW
    )
    assert why.cause is Cause.LEASE_EXPIRED and "reaper" in why.sentence


def test_retry_at_after_failures() -> None:
    why = why_url_waits(
        url(next_fetch_at=LATER, retry_count=2, last_error="HTTP 503"),
        host(),
        now=NOW,
        robots_allows=True,
    )
    assert why.cause is Cause.RETRY_AT and why.until == LATER
    assert "2 failed attempts" in why.sentence and "HTTP 503" in why.sentence


def test_source_disabled_still_fetches_what_it_queued() -> None:
    why = why_url_waits(
        url(), host(), now=NOW, robots_allows=True, source_name="city", source_enabled=False
    )
    assert why.cause is Cause.SOURCE_DISABLED and "city" in why.sentence


def test_fetched_says_how_to_fetch_again() -> None:
    why = why_url_waits(
        url(status="fetched", last_fetched_at=EARLIER, http_status=200), host(), now=NOW
    )
    assert why.cause is Cause.FETCHED and "frontier urls requeue" in why.sentence


def test_dead_says_what_happened_and_how_to_act() -> None:
    why = why_url_waits(
        url(status="dead", dead_reason="not_found", http_status=404), host(), now=NOW
    )
    assert why.cause is Cause.DEAD and "404" in why.sentence
    assert "frontier urls requeue --status dead --host news.example --reason not_found" in (
        why.sentence
    )


def test_failed_needs_an_operator() -> None:
    why = why_url_waits(url(status="failed", last_error="mapping conflict"), host(), now=NOW)
    assert why.cause is Cause.FAILED and "mapping conflict" in why.sentence


def test_host_page_sentence() -> None:
    assert why_host_waits(host(pending_count=0), now=NOW).cause is Cause.DUE_NOW
    busy = why_host_waits(host(backoff_until=LATER, consecutive_failures=3), now=NOW)
    assert busy.cause is Cause.HOST_BACKOFF


def test_a_revisit_waiting_says_so() -> None:
    why = why_url_waits(
        url(next_fetch_at=LATER, revisit_step=2), host(), now=NOW, robots_allows=True
    )
    assert why.cause is Cause.RETRY_AT and why.until == LATER
    assert "revisit 2 of its source's schedule is due at" in why.sentence


def test_a_duplicate_found_through_its_canonical_link_says_so() -> None:
    holder = "https://news.example/story"
    canonical = why_url_waits(
        url(
            status="dead",
            dead_reason="duplicate_content",
            final_url=holder,
            http_status=200,
            last_error=CANONICAL_DUPLICATE.format(holder=holder),
        ),
        host(),
        now=NOW,
    )
    assert f"its canonical link names {holder}, which holds the article" in canonical.sentence
    assert "text is already stored" not in canonical.sentence
    same_text = why_url_waits(
        url(
            status="dead",
            dead_reason="duplicate_content",
            final_url=holder,
            http_status=200,
            last_error=CONTENT_DUPLICATE.format(holder=holder),
        ),
        host(),
        now=NOW,
    )
    assert f"its text is already stored under {holder}" in same_text.sentence
