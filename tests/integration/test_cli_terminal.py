"""Issue 19, item 13: text from outside (source names, URLs, error texts) reaches the
terminal with its control characters escaped (`\\x1b`), in every CLI output path."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from frontier.stats import FrontierStats, HostCounts
from frontier_cli.status import render_status
from frontier_cli.terminal import json_text, printable
from frontier_cli.up import Console

EVIL = "evil\x1b]0;owned\x07\x1b[2J\r\u202e"
SHOWN = "evil\\x1b]0;owned\\x07\\x1b[2J\\r\\u202e"


def frontier(*args: str, dsn: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    return subprocess.run(
        [sys.executable, "-m", "frontier", *args],
        env={
            **clean,
            "FRONTIER_DATABASE_URL": dsn,
            "FRONTIER_ALLOW_PRIVATE_NETWORKS": "true",
            "FRONTIER_SEED_DEFAULT_SOURCES": "false",
        },
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (EVIL, SHOWN),
        ("plain café \u2013 ok", "plain café \u2013 ok"),
        ("a\nb\tc", "a\\nb\\tc"),
        ("csi \x9b31m", "csi \\x9b31m"),
        ("nbsp\u00a0kept", "nbsp\u00a0kept"),
    ],
)
def test_printable_escapes_what_a_terminal_acts_on(text: str, shown: str) -> None:
    assert printable(text) == shown
    assert printable("a\nb\x1b", keep_newlines=True) == "a\nb\\x1b"


def test_sources_list_and_poll_summaries_escape_source_names(fresh_dsn: str) -> None:
    added = frontier("sources", "add", EVIL, "--feed-url", "http://127.0.0.1:9/feed", dsn=fresh_dsn)
    assert added.returncode == 0, added.stderr
    listed = frontier("sources", "list", dsn=fresh_dsn)
    polled = frontier("poll", "--once", dsn=fresh_dsn)
    fired = frontier("poll", "--source", EVIL, dsn=fresh_dsn)
    frontier("sources", "add", EVIL + "2", "--feed-url", "http://127.0.0.1:9/f2", dsn=fresh_dsn)
    fired_json = frontier("poll", "--source", EVIL + "2", "--json", dsn=fresh_dsn)
    for result in (added, listed, polled, fired, fired_json):
        output = result.stdout + result.stderr
        assert "\x1b" not in output and "\x07" not in output and "\u202e" not in output, output
    assert SHOWN in added.stdout and SHOWN in listed.stdout and SHOWN in polled.stdout
    assert SHOWN in fired.stdout
    assert json.loads(fired_json.stdout)["source"] == EVIL + "2"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ({"t": "caf\u00e9 \u2013"}, '"caf\u00e9 \u2013"'),
        ({"t": "csi \x9b31m"}, '"csi \\u009b31m"'),
        ({"t": "rtl \u202e, nel \x85"}, '"rtl \\u202e, nel \\u0085"'),
        ({"t": "private \U000f0000"}, '"private \\udb80\\udc00"'),
        ({"t": "esc \x1b"}, '"esc \\u001b"'),
    ],
)
def test_json_output_keeps_letters_and_escapes_what_a_terminal_acts_on(
    value: dict[str, str], shown: str
) -> None:
    text = json_text(value)
    assert shown in text
    assert json.loads(text) == value


def test_status_and_up_console_escape_outside_text() -> None:
    stats = FrontierStats(
        total=1,
        by_status={"failed": 1},
        by_origin={"feed": 1},
        by_source={EVIL: 1},
        due_now=0,
        oldest_due_at=datetime(2030, 1, 1, tzinfo=UTC),
        claims_last_minute=0,
        hosts=HostCounts(known=1, ready_now=0, top_pending=[{"host": EVIL, "pending": 1}]),
        recent_errors=[
            {
                "at": "2030-01-01T00:00:00+00:00",
                "kind": "feed",
                "url": "https://e.example/\x1b[2J",
                "error": f"HTTP 500: {EVIL}",
            }
        ],
    )
    rendered = render_status(stats)
    assert "\x1b" not in rendered and rendered.count(SHOWN) == 3

    stream = io.StringIO()
    console = Console(stream, every_s=30.0)
    console.event(f"poll FAILED {EVIL}: boom")
    console.progress(f"progress {EVIL}")
    assert "\x1b" not in stream.getvalue() and stream.getvalue().count(SHOWN) == 2
