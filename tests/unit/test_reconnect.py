"""The reconnect policy without a database: which errors are connection losses, the backoff
delays, and the two log lines an outage leaves."""

from __future__ import annotations

import logging

import asyncpg
import pytest

from frontier.errors import DatabaseUnavailable
from frontier.reconnect import Backoff, Outage, describe_cause, is_connection_loss


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionRefusedError(111, "Connection refused"),
        ConnectionResetError(104, "Connection reset by peer"),
        FileNotFoundError(2, "No such file or directory"),  # the Unix socket is gone
        TimeoutError(),
        asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
        asyncpg.CannotConnectNowError("the database system is starting up"),
        asyncpg.CannotConnectNowError("the database system is shutting down"),
        asyncpg.AdminShutdownError("terminating connection due to administrator command"),
        asyncpg.CrashShutdownError("terminating connection because of crash"),
        asyncpg.TooManyConnectionsError("sorry, too many clients already"),
        asyncpg.InterfaceError("connection is closed"),
        # a pooled connection whose backend was terminated while it sat idle
        asyncpg.InternalClientError(
            "cannot switch to state 11; another operation (2) is in progress"
        ),
        asyncpg.InternalClientError('cannot switch to state 15; protocol is in the "failed" state'),
        DatabaseUnavailable("database unavailable at h:5432/db: gone"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_connection_losses_are_recognised(exc: BaseException) -> None:
    assert is_connection_loss(exc)


@pytest.mark.parametrize(
    "exc",
    [
        asyncpg.UniqueViolationError("duplicate key"),
        asyncpg.DeadlockDetectedError("deadlock detected"),
        asyncpg.QueryCanceledError("canceling statement due to statement timeout"),
        asyncpg.PostgresSyntaxError("syntax error"),
        asyncpg.InterfaceError("cannot perform operation: another operation is in progress"),
        asyncpg.InterfaceError("pool is closed"),
        asyncpg.InternalClientError("got result for unknown protocol state 3"),
        ValueError("bad"),
        KeyError("x"),
    ],
    ids=lambda exc: f"{type(exc).__name__}:{exc}",
)
def test_statement_errors_are_not_connection_losses(exc: BaseException) -> None:
    assert not is_connection_loss(exc)


def test_backoff_doubles_up_to_the_cap_and_resets() -> None:
    backoff = Backoff(cap_s=4.0, base_s=0.5, rand=lambda: 0.5)  # jitter pinned to none
    assert [backoff.next_delay() for _ in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    backoff.reset()
    assert backoff.next_delay() == 0.5


def test_backoff_jitter_stays_within_twenty_percent() -> None:
    low = Backoff(cap_s=10.0, base_s=1.0, rand=lambda: 0.0)
    high = Backoff(cap_s=10.0, base_s=1.0, rand=lambda: 1.0)
    assert low.next_delay() == pytest.approx(0.8)
    assert high.next_delay() == pytest.approx(1.2)


def test_a_cap_below_the_base_wins() -> None:
    assert Backoff(cap_s=0.2, rand=lambda: 0.5).next_delay() == pytest.approx(0.2)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "frontier.db"]


def test_an_outage_logs_one_line_down_and_one_line_back(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    clock = Clock()
    outage = Outage("127.0.0.1:5432/frontier", clock=clock)
    cause = ConnectionRefusedError(111, "Connect call failed")
    error = DatabaseUnavailable("database unavailable at 127.0.0.1:5432/frontier: refused")
    error.__cause__ = cause
    started_before = outage.started()
    clock.now = 101.0
    outage.lost()
    for delay in (0.5, 1.0, 2.0):  # three loops (or three retries) report the same outage
        outage.report(error, delay)
    outage.ok(started_before)  # began before the outage: proves nothing
    assert outage.down
    clock.now = 108.5
    outage.ok(outage.started())
    assert not outage.down
    assert lines(caplog) == [
        "database unavailable at 127.0.0.1:5432/frontier: [Errno 111] Connect call failed; "
        "retrying in 0.5 s",
        "database reachable again after 7.5 s",
    ]
    outage.ok(outage.started())  # no outage, no line
    outage.report(error, None)  # a second outage gets its own line
    assert lines(caplog)[-1].endswith("answering 503 until it is back")
    assert outage.outages == 2


def test_describe_cause_takes_the_first_line_or_the_type() -> None:
    assert describe_cause(ValueError("one\ntwo")) == "one"
    assert describe_cause(TimeoutError()) == "TimeoutError"
