"""Start-up options of the long-running services, without a database: `--every` durations
and the default User-Agent warning."""

from __future__ import annotations

import logging

import pytest
import typer

from frontier.settings import Settings
from frontier_cli.app import warn_if_default_user_agent
from frontier_cli.spider import parse_every


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("300", 300.0),
        ("45s", 45.0),
        ("5m", 300.0),
        ("1h", 3600.0),
        ("1.5h", 5400.0),
        ("2d", 172_800.0),
        (" 10m ", 600.0),
    ],
)
def test_every_takes_seconds_or_a_unit(text: str, seconds: float) -> None:
    assert parse_every(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "0m", "-5m", "5x", "h", "5 minutes", "1h30m"])
def test_every_refuses_what_is_not_a_positive_duration(text: str) -> None:
    with pytest.raises(typer.BadParameter):
        parse_every(text)


def test_the_default_user_agent_is_warned_about_naming_the_setting(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FRONTIER_USER_AGENT", raising=False)
    with caplog.at_level(logging.WARNING):
        assert warn_if_default_user_agent(Settings.load(_env_file=None)) is True
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert "FRONTIER_USER_AGENT" in caplog.records[0].getMessage()


def test_an_own_user_agent_is_not_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    settings = Settings.load(_env_file=None).model_copy(
        update={"user_agent": "examplebot/1.0 (+https://example.org/bot)"}
    )
    with caplog.at_level(logging.WARNING):
        assert warn_if_default_user_agent(settings) is False
    assert caplog.records == []
