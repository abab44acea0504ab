"""How the pages say when: `ago` for what happened, `due` for what is scheduled (a source's
next poll a few seconds in the past is due now, not "5 s ago")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from frontier.api.templating import ago, due

NOW = datetime(2026, 11, 27, 18, 50, tzinfo=UTC)


def test_a_scheduled_time_that_has_come_is_due_now() -> None:
    assert due(NOW - timedelta(seconds=5), NOW) == "due now"
    assert due(NOW, NOW) == "due now"
    assert due(NOW + timedelta(minutes=3, seconds=10), NOW) == "in 3 min"


def test_what_happened_is_said_as_ago() -> None:
    assert ago(NOW - timedelta(seconds=5), NOW) == "5 s ago"
    assert ago(NOW + timedelta(hours=2), NOW) == "in 2 h"
    assert ago(None, NOW) == "never"
