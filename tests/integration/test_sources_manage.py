"""`frontier sources show|update|enable|disable|export` and `import --sync [--prune]`
as a user runs them (issue 36, item 16): export writes what import reads, in YAML and
OPML, and a sync makes the database match the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SPEC = """
sources:
  - name: Alpha News
    feed_url: https://alpha.example/feed.xml
    base_url: https://alpha.example/
    priority: 8
    adaptive_interval: true
    url_filters: {exclude: ["/sponsored/"], most_recent: 10}
    min_published_at: 2030-01-01
    revisit: [1h, 6h]
  - name: Beta spider
    base_url: https://beta.example/
    ingestion_mode: spider
    article_url_patterns: ["/20\\\\d\\\\d/"]
    spider_interval_minutes: 60
    spider_listing_urls: [https://beta.example/latest]
  - name: Gamma
    feed_url: https://gamma.example/rss
    rate_limit_ms: 2500
    politeness_key: domain
    selectors: {title: h1}
"""


def frontier(*args: str, dsn: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    return subprocess.run(
        [sys.executable, "-m", "frontier", *args],
        env={**clean, "FRONTIER_DATABASE_URL": dsn},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("fmt", ["yaml", "opml"])
def test_export_import_sync_round_trip(
    fmt: str, fresh_dsn: str, second_dsn: str, tmp_path: Path
) -> None:
    spec = tmp_path / "feeds.yaml"
    spec.write_text(SPEC)
    ok(frontier("sources", "import", str(spec), dsn=fresh_dsn))
    exported = ok(frontier("sources", "export", "--format", fmt, dsn=fresh_dsn))
    if fmt == "opml":
        assert 'type="rss"' in exported and 'xmlUrl="https://alpha.example/feed.xml"' in exported
    else:
        assert "Alpha News" in exported and "manual" not in exported
    path = tmp_path / f"sources.{fmt}"
    path.write_text(exported)
    synced = json.loads(
        ok(frontier("sources", "import", str(path), "--sync", "--json", dsn=second_dsn))
    )
    assert synced["added"] == ["Alpha News", "Beta spider", "Gamma"]
    assert synced["failed"] == 0
    assert ok(frontier("sources", "export", "--format", fmt, dsn=second_dsn)) == exported
    # every field came through, not only those both exports could lose alike
    shown = json.loads(ok(frontier("sources", "show", "Beta spider", "--json", dsn=second_dsn)))
    assert shown["spider_listing_urls"] == ["https://beta.example/latest"]
    assert shown["spider_interval_minutes"] == 60
    assert shown["ingestion_mode"] == "spider"
    shown = json.loads(ok(frontier("sources", "show", "Alpha News", "--json", dsn=second_dsn)))
    assert shown["revisit"] == [3600, 21600] and shown["adaptive_interval"] is True
    assert shown["min_published_at"].startswith("2030-01-01")
    # a second sync changes nothing
    again = json.loads(
        ok(frontier("sources", "import", str(path), "--sync", "--json", dsn=second_dsn))
    )
    assert (
        again["added"] == [] and again["updated"] == [] and again["unchanged"] == 4
    )  # with `discovered`


def test_show_update_enable_disable(fresh_dsn: str) -> None:
    ok(frontier("sources", "add", "news", "--feed-url", "https://news.example/feed", dsn=fresh_dsn))
    text = ok(frontier("sources", "show", "news", dsn=fresh_dsn))
    assert "https://news.example/feed" in text and "priority:" in text
    ok(
        frontier(
            "sources",
            "update",
            "news",
            "--priority",
            "9",
            "--rate-limit-ms",
            "1500",
            "--spider-interval-minutes",
            "90",
            "--url-filters",
            '{"keywords": ["port"]}',
            dsn=fresh_dsn,
        )
    )
    shown = json.loads(ok(frontier("sources", "show", "news", "--json", dsn=fresh_dsn)))
    assert shown["priority"] == 9 and shown["rate_limit_ms"] == 1500
    assert shown["spider_interval_minutes"] == 90
    assert shown["url_filters"] == {"keywords": ["port"]}
    assert shown["feed_url"] == "https://news.example/feed"  # not given: unchanged
    assert shown["urls"] == {}
    ok(frontier("sources", "update", "news", "--clear", "rate_limit_ms", dsn=fresh_dsn))
    ok(frontier("sources", "disable", "news", dsn=fresh_dsn))
    shown = json.loads(ok(frontier("sources", "show", "news", "--json", dsn=fresh_dsn)))
    assert shown["enabled"] is False and shown["rate_limit_ms"] is None
    ok(frontier("sources", "enable", "news", dsn=fresh_dsn))
    assert json.loads(ok(frontier("sources", "show", "news", "--json", dsn=fresh_dsn)))["enabled"]
    # bad input: a clear one-line error, exit 2, nothing changed
    bad = frontier("sources", "update", "news", "--priority", "11", dsn=fresh_dsn)
    assert bad.returncode == 2 and "priority" in bad.stderr and "Traceback" not in bad.stderr
    cleared = frontier("sources", "update", "news", "--clear", "priority", dsn=fresh_dsn)
    assert cleared.returncode == 2
    assert "priority: always has a value and cannot be cleared" in cleared.stderr
    nothing = frontier("sources", "update", "news", dsn=fresh_dsn)
    assert nothing.returncode == 2 and "at least one field" in nothing.stderr
    missing = frontier("sources", "show", "nope", dsn=fresh_dsn)
    assert missing.returncode == 2 and "no source named 'nope'" in missing.stderr
    manual = frontier("sources", "disable", "manual", dsn=fresh_dsn)
    assert manual.returncode == 2 and "cannot be disabled" in manual.stderr


def test_sync_prune_dry_run_then_apply(fresh_dsn: str, tmp_path: Path) -> None:
    spec = tmp_path / "feeds.yaml"
    spec.write_text(SPEC)
    ok(frontier("sources", "import", str(spec), dsn=fresh_dsn))
    changed = tmp_path / "changed.yaml"
    changed.write_text(
        "sources:\n"
        "  - name: Alpha News\n"
        "    feed_url: https://alpha.example/feed.xml\n"
        "    base_url: https://alpha.example/\n"
        "    priority: 3\n"
        "  - name: Delta\n"
        "    feed_url: https://delta.example/feed\n"
    )
    before = ok(frontier("sources", "export", dsn=fresh_dsn))
    plan = frontier(
        "sources", "import", str(changed), "--sync", "--prune", "--dry-run", dsn=fresh_dsn
    )
    assert plan.returncode == 0, plan.stderr
    assert "would add 1, would update 1, would remove 2" in plan.stdout
    assert "+ Delta" in plan.stdout and "- Beta spider" in plan.stdout and "- Gamma" in plan.stdout
    assert "~ Alpha News: priority 8 -> 3" in plan.stdout
    assert "- manual" not in plan.stdout and "- discovered" not in plan.stdout
    assert ok(frontier("sources", "export", dsn=fresh_dsn)) == before  # nothing changed
    done = json.loads(
        ok(
            frontier(
                "sources",
                "import",
                "-",
                "--sync",
                "--prune",
                "--json",
                dsn=fresh_dsn,
                stdin=changed.read_text(),
            )
        )
    )
    assert done["dry_run"] is False and done["added"] == ["Delta"]
    assert done["removed"] == ["Beta spider", "Gamma"]
    names = [
        s["name"] for s in json.loads(ok(frontier("sources", "list", "--json", dsn=fresh_dsn)))
    ]
    assert sorted(names) == ["Alpha News", "Delta", "discovered", "manual"]
    alpha = json.loads(ok(frontier("sources", "show", "Alpha News", "--json", dsn=fresh_dsn)))
    # the fields the file leaves out are the defaults again
    assert alpha["priority"] == 3 and alpha["adaptive_interval"] is False
    assert alpha["url_filters"] is None and alpha["revisit"] is None
    # without --prune nothing is removed
    only = tmp_path / "only.yaml"
    only.write_text("sources:\n  - name: Delta\n    feed_url: https://delta.example/feed\n")
    kept = json.loads(
        ok(frontier("sources", "import", str(only), "--sync", "--json", dsn=fresh_dsn))
    )
    assert kept["removed"] == [] and kept["unchanged"] == 1


def test_sync_errors_per_entry_and_protect_their_sources(fresh_dsn: str, tmp_path: Path) -> None:
    ok(frontier("sources", "add", "Keep", "--feed-url", "https://keep.example/feed", dsn=fresh_dsn))
    ok(frontier("sources", "add", "Drop", "--feed-url", "https://drop.example/feed", dsn=fresh_dsn))
    spec = tmp_path / "feeds.yaml"
    spec.write_text(
        "sources:\n"
        "  - name: Keep\n"
        "    feed_url: https://keep.example/feed\n"
        "    priority: 11\n"
        "  - name: New\n"
        "    feed_url: https://new.example/feed\n"
    )
    result = frontier("sources", "import", str(spec), "--sync", "--prune", dsn=fresh_dsn)
    assert result.returncode == 1
    assert "entry 1 (Keep): priority" in result.stderr
    assert "add 1, update 0, remove 1" in result.stdout
    names = [
        s["name"] for s in json.loads(ok(frontier("sources", "list", "--json", dsn=fresh_dsn)))
    ]
    assert sorted(names) == [
        "Keep",
        "New",
        "discovered",
        "manual",
    ]  # the refused entry's source stays
    bad_opml = tmp_path / "bad.opml"
    bad_opml.write_text('<opml version="2.0"><body><outline text="x"/></body></opml>')
    refused = frontier("sources", "import", str(bad_opml), "--sync", dsn=fresh_dsn)
    assert refused.returncode == 2 and "OPML lists no feeds" in refused.stderr
    usage = frontier("sources", "import", str(spec), "--prune", dsn=fresh_dsn)
    assert usage.returncode == 2 and "--sync" in usage.stderr


def test_opml_frontier_fields_refused_per_outline() -> None:
    from frontier.source_specs import parse_specs

    parsed = parse_specs(
        b'<opml version="2.0" xmlns:frontier="urn:frontier:opml:source"><body>'
        b'<outline text="A" xmlUrl="https://a.example/feed" frontier:source="{not json"/>'
        b'<outline text="B" xmlUrl="https://b.example/feed" frontier:source="[1]"/>'
        b'<outline text="C" xmlUrl="https://c.example/feed" frontier:source=\'{"priority": 0}\'/>'
        b'<outline text="D" xmlUrl="https://d.example/feed" frontier:source=\'{"priority": 9}\'/>'
        b"</body></opml>"
    )
    reasons = {e.name: e.reason for e in parsed.errors}
    assert reasons["A"] == "frontier:source: not valid JSON"
    assert reasons["B"] == "frontier:source: not a JSON object"
    assert reasons["C"].startswith("priority:")
    assert [(n, s.name, s.priority) for n, s in parsed.specs] == [(4, "D", 9)]


def test_a_feed_readers_opml_syncs_and_exports(fresh_dsn: str, tmp_path: Path) -> None:
    reader = tmp_path / "miniflux.opml"
    reader.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<opml version="2.0"><head><title>Miniflux'
        '</title></head><body><outline text="News">'
        '<outline title="Harbour" text="Harbour" xmlUrl="https://harbour.example/feed"'
        ' htmlUrl="https://harbour.example/" type="rss"/>'
        '<outline text="Isle" xmlUrl="https://isle.example/atom.xml" type="rss"/>'
        "</outline></body></opml>"
    )
    first = json.loads(
        ok(frontier("sources", "import", str(reader), "--sync", "--json", dsn=fresh_dsn))
    )
    assert first["added"] == ["Harbour", "Isle"]
    again = json.loads(
        ok(frontier("sources", "import", str(reader), "--sync", "--json", dsn=fresh_dsn))
    )
    assert again["added"] == again["updated"] == [] and again["unchanged"] == 2
    out = tmp_path / "out.opml"
    result = frontier("sources", "export", "--format", "opml", "--output", str(out), dsn=fresh_dsn)
    assert result.returncode == 0 and "wrote" in result.stderr
    text = out.read_text()
    assert (
        '<outline type="rss" text="Harbour" title="Harbour" xmlUrl="https://harbour.example/feed" htmlUrl="https://harbour.example/"/>'
        in text
    )
    bad = frontier("sources", "export", "--format", "csv", dsn=fresh_dsn)
    assert bad.returncode == 2 and "yaml or opml" in bad.stderr
