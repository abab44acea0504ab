"""FRONTIER_LOG_LEVEL / FRONTIER_LOG_FORMAT: the level a command runs at, JSON lines with
the caller's fields, and the one-line failure texts (cause first)."""

from __future__ import annotations

import json
import logging

import pytest

from frontier import log_setup
from frontier.settings import Settings, SettingsError
from poller.poll_summary import PollSummary
from spider.summary import CrawlSummary


def test_services_log_at_info_and_one_shot_commands_at_warning() -> None:
    assert log_setup.level_for(None, service=True) == logging.INFO
    assert log_setup.level_for(None, service=False) == logging.WARNING
    assert log_setup.level_for("ERROR", service=True) == logging.ERROR
    assert log_setup.level_for("INFO", service=False, verbose=True) == logging.DEBUG


def test_the_settings_take_a_level_in_any_case_and_refuse_others() -> None:
    assert Settings.load(log_level="debug", _env_file=None).log_level == "DEBUG"
    assert Settings.load(_env_file=None).log_level is None
    with pytest.raises(SettingsError, match="FRONTIER_LOG_LEVEL"):
        Settings.load(log_level="chatty", _env_file=None)
    with pytest.raises(SettingsError, match="FRONTIER_LOG_FORMAT"):
        Settings.load(log_format="xml", _env_file=None)


def test_a_json_line_has_time_level_logger_message_and_the_fields() -> None:
    record = logging.makeLogRecord(
        {
            "name": "poller",
            "levelno": logging.WARNING,
            "levelname": "WARNING",
            "msg": "poll failed: %s",
            "args": ("timed out",),
            "source": "news",
            "items_new": 0,
        }
    )
    line = json.loads(log_setup.JsonFormatter().format(record))
    assert line["level"] == "WARNING" and line["logger"] == "poller"
    assert line["message"] == "poll failed: timed out"
    assert line["source"] == "news" and line["items_new"] == 0
    assert line["time"].endswith("+00:00")
    assert "args" not in line and "msg" not in line and "traceback" not in line


def test_a_failed_poll_is_one_warning_with_the_cause_first(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failed = PollSummary(
        "news-x",
        "https://news-x.invalid/rss",
        False,
        "DNS lookup failed for news-x.invalid",
        0,
        0,
        "failed",
        12,
    )
    ok = PollSummary("blog", "https://blog.example/feed", True, None, 20, 3, "ok", 85)
    with caplog.at_level(logging.INFO):
        failed.log()
        ok.log()
    first, second = caplog.records
    assert first.levelno == logging.WARNING and first.exc_info is None
    assert first.getMessage() == (
        "poll failed: DNS lookup failed for news-x.invalid "
        "(source news-x, https://news-x.invalid/rss)"
    )
    assert second.levelno == logging.INFO
    assert second.getMessage().startswith("polled blog: ok, seen 20, new 3, 85 ms")
    assert "elapsed_ms" not in ok.as_json()  # the --json row keeps its keys


def test_a_failed_spider_run_logs_and_records_its_cause_not_a_count(
    caplog: pytest.LogCaptureFixture,
) -> None:
    summary = CrawlSummary(
        "wire",
        errors=1,
        start_pages_failed=1,
        last_error="DNS lookup failed: no results for wire.invalid (https://wire.invalid/)",
    )
    assert summary.cause is not None and summary.cause.startswith("DNS lookup failed")
    assert "last error: DNS lookup failed" in summary.render()
    with caplog.at_level(logging.INFO):
        summary.log()
    assert caplog.records[0].getMessage().startswith("spider run failed: DNS lookup failed")
