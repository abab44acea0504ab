"""`frontier submit`, `frontier import` and `frontier sources` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest


def frontier(*args: str, dsn: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    return subprocess.run(
        [sys.executable, "-m", "frontier", *args],
        env={**clean, "FRONTIER_DATABASE_URL": dsn},
        input=stdin.decode("utf-8", "surrogateescape") if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )


def count(dsn: str, where: str = "true") -> int:
    with psycopg.connect(dsn) as conn:
        return conn.execute(f"SELECT count(*) FROM url_frontier WHERE {where}").fetchone()[0]


def test_import_mixed_lines_reports_exact_counts(fresh_dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "urls.txt"
    path.write_bytes(
        b"# a comment\n"
        b"http://a.example/1\n"
        b"\n"
        b"https://b.example/2?utm_source=x\n"
        b"http://a.example/1#again\n"  # duplicate of line 2
        b"javascript:alert(1)\n"  # rejected
        b"http://bad host/\n"  # rejected
        b"http://c.example/\xff\xfe\n"  # not UTF-8: rejected
        b"http://" + b"x" * 5000 + b".example/\n"  # too long: rejected
    )
    result = frontier("import", str(path), "--json", dsn=fresh_dsn)
    assert result.returncode == 1, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["accepted"], summary["duplicate"], summary["rejected"]) == (2, 1, 4)
    assert [e["line"] for e in summary["errors"]] == [6, 7, 8, 9]
    assert all(e["reason"] for e in summary["errors"])
    assert count(fresh_dsn) == 2
    again = frontier("import", str(path), "--json", dsn=fresh_dsn)
    assert json.loads(again.stdout)["duplicate"] == 3


def test_import_csv_and_ndjson_from_stdin(fresh_dsn: str) -> None:
    csv_input = b"title,URL\nOne,http://a.example/1\nTwo,http://a.example/2\nThree\n"
    result = frontier("import", "-", "--format", "csv", "--json", dsn=fresh_dsn, stdin=csv_input)
    summary = json.loads(result.stdout)
    assert (summary["accepted"], summary["rejected"]) == (2, 1), result.stderr
    assert summary["errors"][0]["line"] == 4

    ndjson = (
        b'{"url": "http://n.example/1"}\n"http://n.example/2"\n{"url": 5}\n'
        b'{"link": "x"}\n{"url": "http://n.example/3"\n'
    )
    result = frontier("import", "-", "--format", "ndjson", "--json", dsn=fresh_dsn, stdin=ndjson)
    summary = json.loads(result.stdout)
    assert (summary["accepted"], summary["rejected"]) == (2, 3)
    assert [e["line"] for e in summary["errors"]] == [3, 4, 5]
    assert "invalid JSON" in summary["errors"][2]["reason"]
    assert result.returncode == 1


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (("import", "/no/such/file.txt"), None, "cannot read"),
        (("import", "-", "--format", "csv"), b"name,title\nx,y\n", "'url' column"),
        (("import", "-", "--format", "xml"), b"", "unknown format"),
        (("import", "-", "--source", "nope"), b"http://a.example/\n", "no source named"),
        (
            ("import", "-", "--format", "ndjson"),
            b'"http://a.example/"\n' + b"[" * 5_000,
            "line 2: JSON nested too deeply",
        ),  # issue 19: was exit 1 with a RecursionError
    ],
)
def test_unusable_input_exits_2_with_a_message(
    fresh_dsn: str, args: tuple[str, ...], stdin: bytes | None, message: str
) -> None:
    result = frontier(*args, dsn=fresh_dsn, stdin=stdin)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert message in result.stderr and "Traceback" not in result.stderr


def test_submit_and_sources(fresh_dsn: str) -> None:
    added = frontier(
        "sources",
        "add",
        "news",
        "--feed-url",
        "https://news.example/feed",
        "--priority",
        "7",
        dsn=fresh_dsn,
    )
    assert added.returncode == 0, added.stderr
    duplicate = frontier("sources", "add", "news", dsn=fresh_dsn)
    assert duplicate.returncode == 2 and "already exists" in duplicate.stderr
    bad = frontier("sources", "add", "x", "--feed-url", "ftp://x.example/", dsn=fresh_dsn)
    assert bad.returncode == 2 and "feed_url" in bad.stderr

    result = frontier(
        "submit", "http://a.example/x", "http://a.example/y", "--source", "news", dsn=fresh_dsn
    )
    assert result.returncode == 0, result.stderr
    assert "accepted 2" in result.stdout
    assert count(fresh_dsn, "priority = 7 AND origin = 'manual'") == 2

    listed = json.loads(frontier("sources", "list", "--json", dsn=fresh_dsn).stdout)
    assert {"manual", "news"} <= {s["name"] for s in listed}
    removed = frontier("sources", "remove", "news", dsn=fresh_dsn)
    assert removed.returncode == 0
    assert frontier("sources", "remove", "manual", dsn=fresh_dsn).returncode == 2
    assert count(fresh_dsn, "source_id IS NULL") == 2  # URLs outlive their source

    status = json.loads(frontier("status", "--json", dsn=fresh_dsn).stdout)
    assert status["total"] == 2 and status["by_status"]["pending"] == 2
