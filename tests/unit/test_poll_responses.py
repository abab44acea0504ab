"""The poll response decision shared by feeds and sitemaps: every branch, no I/O."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from frontier.states import LogOutcome
from poller.intervals import RETRY_AFTER_CAP_S
from poller.responses import ResponseDecision, Verdict, decide

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("status", [200, 203, 299])
def test_2xx_is_parsed(status: int) -> None:
    decision = decide(status, {}, NOW)
    assert decision == ResponseDecision(Verdict.PARSE, status)
    assert decision.outcome is LogOutcome.OK and not decision.failed and decision.error is None


def test_304_is_not_modified() -> None:
    decision = decide(304, {"ETag": '"v2"'}, NOW)
    assert decision.verdict is Verdict.NOT_MODIFIED and decision.outcome is LogOutcome.NOT_MODIFIED
    assert not decision.failed and decision.error is None


def test_410_is_gone() -> None:
    decision = decide(410, {}, NOW)
    assert decision.verdict is Verdict.GONE and decision.outcome is LogOutcome.GONE
    assert decision.failed and decision.error == "HTTP 410 Gone"


def test_404_is_not_found() -> None:
    decision = decide(404, {}, NOW)
    assert decision.verdict is Verdict.NOT_FOUND and decision.outcome is LogOutcome.NOT_FOUND
    assert decision.failed and decision.error == "HTTP 404"


@pytest.mark.parametrize("status", [429, 503])
def test_429_and_503_are_rate_limited_until_retry_after(status: int) -> None:
    decision = decide(status, {"Retry-After": "120"}, NOW)
    assert decision == ResponseDecision(Verdict.RATE_LIMITED, status, retry_after_s=120.0)
    assert decision.outcome is LogOutcome.RATE_LIMITED and decision.error == f"HTTP {status}"
    dated = decide(status, {"Retry-After": "Tue, 01 Jan 2030 13:00:00 GMT"}, NOW)
    assert dated.retry_after_s == 3600.0


def test_rate_limited_without_a_usable_retry_after() -> None:
    assert decide(429, {}, NOW).retry_after_s is None
    assert decide(429, {"Retry-After": "soon"}, NOW).retry_after_s is None
    assert decide(503, {"Retry-After": "99999999999"}, NOW).retry_after_s == RETRY_AFTER_CAP_S


@pytest.mark.parametrize("status", [500, 502, 401, 403, 400, 418, 301, 100, 999])
def test_anything_else_failed(status: int) -> None:
    decision = decide(status, {"Retry-After": "120"}, NOW)
    assert decision == ResponseDecision(Verdict.FAILED, status)  # Retry-After ignored
    assert decision.outcome is LogOutcome.FAILED and decision.error == f"HTTP {status}"


@pytest.mark.parametrize("status", [200, 304, 404, 410, 429, 500])
def test_a_permanent_redirect_carries_the_normalised_new_url(status: int) -> None:
    decision = decide(status, {}, NOW, redirected_to="HTTPS://Example.COM:443/feed/")
    assert decision.moved_to == "https://example.com/feed/"


@pytest.mark.parametrize("target", [None, "", "not a url", "ftp://example.com/feed"])
def test_no_or_an_unusable_redirect_target_moves_nothing(target: str | None) -> None:
    assert decide(200, {}, NOW, redirected_to=target).moved_to is None


def test_the_decision_is_frozen() -> None:
    decision = decide(200, {}, NOW)
    with pytest.raises(AttributeError):
        decision.verdict = Verdict.FAILED  # type: ignore[misc]
