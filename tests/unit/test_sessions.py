"""Dashboard sessions, pure: signed with the role's token, expiring, never holding the
token, refused when edited; the CSRF token is the session's own."""

from __future__ import annotations

import logging

import pytest

from fetcher.worker import log_batch
from frontier.api import sessions
from frontier.fetch_log import LogEntry
from frontier.states import FetchKind, LogOutcome

TOKENS: dict[sessions.Role, str | None] = {"write": "w-secret", "read": "r-secret"}


def test_a_session_round_trips_until_it_expires() -> None:
    value = sessions.issue("read", "r-secret", now=1000, lifetime_s=60)
    assert "r-secret" not in value and "w-secret" not in value
    session = sessions.verify(value, TOKENS, now=1059)
    assert session is not None and session.role == "read" and not session.can_write
    assert sessions.verify(value, TOKENS, now=1060) is None


@pytest.mark.parametrize(
    "edit",
    [
        lambda v: "write." + v.split(".", 1)[1],  # a read session made a write one
        lambda v: v.replace(".1060.", ".9999."),  # its expiry moved
        lambda v: v[:-1] + ("0" if v[-1] != "0" else "1"),  # its signature changed
        lambda v: v + ".x",
        lambda v: "",
        lambda v: "read.never.abc.def",
    ],
)
def test_an_edited_session_is_refused(edit: object) -> None:
    value = sessions.issue("read", "r-secret", now=1000, lifetime_s=60)
    assert sessions.verify(edit(value), TOKENS, now=1001) is None  # type: ignore[operator]


def test_a_new_token_ends_the_sessions_made_with_the_old_one() -> None:
    value = sessions.issue("write", "w-secret", now=1000, lifetime_s=60)
    assert sessions.verify(value, TOKENS, now=1001) is not None
    assert sessions.verify(value, {"write": "rotated", "read": None}, now=1001) is None
    assert sessions.verify(value, {"write": None, "read": "r-secret"}, now=1001) is None


def test_the_csrf_token_belongs_to_its_session() -> None:
    one = sessions.verify(sessions.issue("write", "w-secret", now=0, lifetime_s=60), TOKENS, now=1)
    two = sessions.verify(sessions.issue("write", "w-secret", now=0, lifetime_s=60), TOKENS, now=1)
    assert one is not None and two is not None
    assert sessions.csrf_matches(one, one.csrf)
    assert not sessions.csrf_matches(one, two.csrf)
    assert not sessions.csrf_matches(one, None) and not sessions.csrf_matches(one, "")


def test_which_role_a_token_is() -> None:
    assert sessions.role_of_token("w-secret", TOKENS) == "write"
    assert sessions.role_of_token("r-secret", TOKENS) == "read"
    assert sessions.role_of_token("", TOKENS) is None
    assert sessions.role_of_token("r-secret", {"write": "w-secret", "read": None}) is None


def test_a_fetch_batch_is_one_info_line(caplog: pytest.LogCaptureFixture) -> None:
    entries = [
        LogEntry(FetchKind.PAGE, None, f"https://a.example/{i}", outcome, elapsed_ms=ms)
        for i, (outcome, ms) in enumerate(
            [(LogOutcome.OK, 120), (LogOutcome.OK, 80), (LogOutcome.FAILED, 1840)]
        )
    ]
    with caplog.at_level(logging.INFO):
        log_batch(entries)
        log_batch([])
    (record,) = caplog.records
    assert record.getMessage() == "fetched 3 pages: failed 1, ok 2; slowest 1840 ms"
