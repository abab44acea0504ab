"""The pure half of the fetcher's politeness: which slot a claim reserved, and how long
the first page request waits after a host's robots.txt request."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fetcher.page import Page
from fetcher.politeness import first_request_at, margin_ms, slot_ends
from fetcher.source_cache import UNKNOWN
from frontier.hosts import HostContext, send_by
from frontier.queue import Claim
from frontier.states import Origin, RobotsStatus

T0 = datetime(2026, 1, 1, tzinfo=UTC)
LEASE_S = 60.0


def page(host: str, claimed_at: datetime) -> Page:
    claim = Claim(
        url_hash="0" * 64,
        url=f"http://{host}/a",
        host=host,
        source_id=None,
        origin=Origin.MANUAL,
        parent_url=None,
        depth=0,
        priority=5,
        etag=None,
        last_modified=None,
        discovery_meta=None,
        retry_count=0,
        fetch_count=1,
        lease_until=claimed_at + timedelta(seconds=LEASE_S),
    )
    return Page(claim, UNKNOWN)


def context(host: str, delay_ms: int, next_allowed_at: datetime) -> HostContext:
    return HostContext(
        host=host,
        delay_ms=delay_ms,
        next_allowed_at=next_allowed_at,
        backoff_until=None,
        robots_status=RobotsStatus.OK,
        robots_txt=None,
        robots_fetched_at=T0,
        robots_ttl_hours=24,
        robots_retry_at=None,
        robots_failures=0,
        lease_owner=None,
        lease_until=None,
        now=T0,
    )


def test_the_margin_is_a_tenth_of_the_delay_floored_and_capped() -> None:
    assert margin_ms(1000, 250) == 100
    assert margin_ms(10_000, 250) == 250
    assert margin_ms(50, 250) == 10  # enough to start a request in
    assert margin_ms(1, 250) == 10
    assert margin_ms(0, 250) == 0


def test_the_first_request_waits_out_the_delay_after_robots_txt() -> None:
    assert first_request_at(100.0, 2000, 100) == 100.0 + 2.1
    assert first_request_at(100.0, 0, 100) == 100.0


def test_the_slot_ends_at_claim_time_plus_delay_or_earlier() -> None:
    pages = [page("a", T0), page("b", T0)]
    ctx = {
        "a": context("a", 1000, T0 + timedelta(seconds=5)),  # later than the claim reserved
        "b": context("b", 1000, T0 + timedelta(milliseconds=500)),  # already earlier
    }
    assert slot_ends(pages, ctx, lease_s=LEASE_S, leased=False) == [
        ("a", T0 + timedelta(seconds=1)),
        ("b", T0 + timedelta(milliseconds=500)),
    ]


def test_a_host_without_delay_has_no_slot_unless_leased() -> None:
    pages = [page("a", T0)]
    ctx = {"a": context("a", 0, T0)}
    assert slot_ends(pages, ctx, lease_s=LEASE_S, leased=False) == []
    assert slot_ends(pages, ctx, lease_s=LEASE_S, leased=True) == [("a", T0)]


def test_a_slot_must_be_used_within_its_margin_of_asking() -> None:
    assert send_by(100.0, 30) == 100.03
    assert send_by(100.0, None) is None  # no delay to keep: no deadline
