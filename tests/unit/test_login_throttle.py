"""The login throttle's window and its bound, on a pinned clock."""

from __future__ import annotations

import pytest

from frontier.api.errors import RateLimited
from frontier.api.login_throttle import LoginThrottle


def test_a_client_is_held_after_its_failures_until_the_window_ends() -> None:
    throttle = LoginThrottle(failures=3, window_s=60)
    for second in (0, 1, 2):
        throttle.check("a", now=second)
        throttle.failed("a", now=second)
    with pytest.raises(RateLimited) as held:
        throttle.check("a", now=10)
    assert held.value.headers == {"Retry-After": "50"}
    throttle.check("b", now=10)  # another address is not held
    throttle.check("a", now=60)  # the window ended: three more tries
    throttle.failed("a", now=60)
    throttle.check("a", now=61)


def test_the_clients_remembered_are_bounded() -> None:
    throttle = LoginThrottle(failures=1, window_s=60, max_clients=2)
    for client in ("a", "b", "c"):
        throttle.failed(client, now=0)
    assert len(throttle.windows) == 2
    throttle.check("a", now=1)  # the oldest was forgotten
    with pytest.raises(RateLimited):
        throttle.check("c", now=1)
    throttle.failed("d", now=61)  # the expired ones go first
    assert set(throttle.windows) == {"d"}
