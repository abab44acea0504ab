"""`parse_filter`: what an operator may ask `frontier urls requeue|purge` (and the API) to
act on, and the message for what it may not. Pure: no database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from frontier.url_actions import BadUrlFilter, parse_filter

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


def test_defaults_select_every_failed_and_dead_url() -> None:
    wanted = parse_filter(now=NOW)
    assert wanted.statuses == ("failed", "dead")
    assert (wanted.dead_reason, wanted.host, wanted.source, wanted.changed_before) == (
        None,
        None,
        None,
        None,
    )


def test_a_reason_implies_dead_and_hosts_and_ages_are_normalised() -> None:
    wanted = parse_filter(reason="max_retries", host="WWW.Example.ORG:80", older_than="2d", now=NOW)
    assert wanted.statuses == ("dead",)
    assert wanted.host == "www.example.org"
    assert wanted.changed_before == NOW - timedelta(days=2)
    assert parse_filter(status="failed", now=NOW).statuses == ("failed",)


@pytest.mark.parametrize(
    "values, says",
    [
        ({"status": "fetching"}, "status: fetching URLs are leased to a fetcher"),
        ({"status": "pending"}, "status: pending URLs are already queued"),
        ({"status": "x" * 100}, "is not one of failed, dead, fetched"),
        ({"status": "fetched", "reason": "gone"}, "reason: fetched URLs have no dead reason"),
        ({"reason": "timeout"}, "reason: 'timeout' is not a dead reason (not_found, gone"),
        ({"status": "failed", "reason": "gone"}, "reason: failed URLs have no dead reason"),
        ({"older_than": "yesterday"}, "older_than: 'yesterday' is not a duration"),
        ({"host": "exa mple.org"}, "host: 'exa mple.org' is not a host name"),
    ],
)
def test_refusals_name_the_option(values: dict[str, str], says: str) -> None:
    with pytest.raises(BadUrlFilter) as refused:
        parse_filter(now=NOW, **values)
    assert says in str(refused.value)


def test_fetched_urls_are_requeued_only_when_named_and_never_purged() -> None:
    assert parse_filter(status="fetched", now=NOW).statuses == ("fetched",)
    assert "fetched" not in parse_filter(now=NOW).statuses  # never by default
    with pytest.raises(BadUrlFilter) as refused:
        parse_filter(status="fetched", now=NOW, action="purge")
    assert "status: fetched URLs are not purged; `requeue --status fetched`" in str(refused.value)
