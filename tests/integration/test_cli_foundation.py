"""The foundation commands against a real PostgreSQL, run as a user would run them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def frontier(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    return subprocess.run(
        [sys.executable, "-m", "frontier", *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_db_upgrade_is_idempotent_and_status_prints_zeros(empty_dsn: str) -> None:
    env = {"FRONTIER_DATABASE_URL": empty_dsn}
    for _ in range(2):
        result = frontier("db", "upgrade", env=env)
        assert result.returncode == 0, result.stderr
    result = frontier("status", "--json", env=env)
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["total"] == 0
    assert stats["due_now"] == 0
    assert stats["by_status"] == dict.fromkeys(
        ["pending", "fetching", "fetched", "failed", "dead"], 0
    )
    assert stats["by_origin"] == dict.fromkeys(["feed", "sitemap", "spider", "manual"], 0)


def test_status_on_an_unmigrated_external_database_says_what_to_do(empty_dsn: str) -> None:
    result = frontier("status", env={"FRONTIER_DATABASE_URL": empty_dsn})
    assert result.returncode == 2
    assert "frontier db upgrade" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("dsn", "names"),
    [
        ("postgresql://u:p@127.0.0.1:1/frontier", "127.0.0.1:1"),
        ("postgresql://u:p@no-such-host.invalid:5432/frontier", "no-such-host.invalid"),
    ],
)
def test_a_bad_dsn_gives_one_line_and_exit_code_2(dsn: str, names: str) -> None:
    for command in (("db", "upgrade"), ("status",)):
        result = frontier(*command, env={"FRONTIER_DATABASE_URL": dsn})
        assert result.returncode == 2
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert names in lines[0] and "cannot connect" in lines[0]


def test_an_invalid_setting_names_the_variable() -> None:
    result = frontier("status", env={"FRONTIER_LEASE_SECONDS": "soon"})
    assert result.returncode == 2
    assert "FRONTIER_LEASE_SECONDS" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_lists_only_real_commands() -> None:
    result = frontier("--help", env={})
    assert result.returncode == 0
    assert "status" in result.stdout and "db" in result.stdout


@pytest.mark.parametrize(
    "dsn",
    [
        "host=127.0.0.1 port=5432 user=u password=s3cret-pw dbname=x",
        "postgresql://u:s3cret-pw@127.0.0.1:99999/x",
        "postgresql://u:s3cret-pw@127.0.0.1:abc/x",
    ],
    ids=["key-value", "port-99999", "port-abc"],
)
def test_a_malformed_dsn_is_one_line_exit_2_and_never_shows_its_password(dsn: str) -> None:
    # Issue 19, item 12, for every command that reads FRONTIER_DATABASE_URL.
    for command in (("db", "upgrade"), ("status",), ("sources", "list"), ("poll", "--once")):
        result = frontier(*command, env={"FRONTIER_DATABASE_URL": dsn})
        assert result.returncode == 2, (command, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "FRONTIER_DATABASE_URL" in lines[0], result.stderr
        assert "s3cret" not in result.stderr + result.stdout
