"""`frontier sources import` (YAML and OPML) with per-entry errors, and seeding the
packaged defaults once (a deleted default never comes back; no network involved)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from frontier.db import Database
from frontier.settings import Settings
from frontier.source_specs import UnusableSpec, import_specs, parse_specs
from frontier.sources import SourceRepository
from frontier_cli import load_commands
from poller.seeding import default_specs, seed_defaults

YAML = b"""
sources:
  - name: Good
    feed_url: https://good.example/feed.xml
    priority: 8
    adaptive_interval: true
    url_filters: {exclude: ["/sponsored/"], most_recent: 10}
    min_published_at: 2030-01-01
  - name: Bad priority
    feed_url: https://bad.example/feed
    priority: 11
  - name: Typo
    feed_ur: https://typo.example/feed
  - name: Good
    feed_url: https://dup.example/feed
  - name: Site only
    base_url: https://site.example/
    ingestion_mode: both
"""

OPML = b"""<?xml version="1.0"?>
<opml version="2.0"><head><title>subs</title></head><body>
 <outline text="News">
  <outline text="One" type="rss" xmlUrl="https://one.example/rss" htmlUrl="https://one.example/"/>
  <outline title="Two" type="rss" xmlUrl="https://two.example/atom.xml"/>
  <outline text="Broken" type="rss" xmlUrl="ftp://three.example/feed"/>
 </outline>
</body></opml>"""


async def test_yaml_import_reports_per_entry_errors(db: Database) -> None:
    summary = await import_specs(SourceRepository(db), parse_specs(YAML, "feeds.yaml"))

    assert summary.added == ["Good", "Site only"]
    assert [(e.entry, e.name) for e in summary.errors] == [
        (2, "Bad priority"),
        (3, "Typo"),
        (4, "Good"),
    ]
    assert "priority" in summary.errors[0].reason and "feed_ur" in summary.errors[1].reason
    assert "already exists" in summary.errors[2].reason
    good = await SourceRepository(db).get("Good")
    assert good.priority == 8 and good.url_filters == {
        "exclude": ["/sponsored/"],
        "most_recent": 10,
    }
    assert good.min_published_at is not None and good.min_published_at.year == 2030
    adaptive = await db.fetchval(
        "SELECT adaptive_interval FROM feed_state WHERE source_id = $1", good.id
    )
    assert adaptive is True


async def test_opml_import(db: Database) -> None:
    summary = await import_specs(SourceRepository(db), parse_specs(OPML, "subs.opml"))
    assert summary.added == ["One", "Two"]
    assert [e.name for e in summary.errors] == ["Broken"]
    one = await SourceRepository(db).get("One")
    assert (one.feed_url, one.base_url) == ("https://one.example/rss", "https://one.example/")


@pytest.mark.parametrize(
    "data, name",
    [
        (b"sources: 3", "x.yaml"),
        (b"just: text", "x.yaml"),
        (b"<opml><body/></opml>", "x.opml"),
        (b'<!DOCTYPE o [<!ENTITY a "b">]><opml/>', "x.opml"),
    ],
)
def test_unusable_files_are_refused_as_a_whole(data: bytes, name: str) -> None:
    with pytest.raises(UnusableSpec):
        parse_specs(data, name)


def _laughs(levels: int) -> bytes:
    """A YAML "billion laughs": each anchor a list of nine aliases of the one before."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, levels + 1)]
    return ("\n".join(lines) + f"\nsources: *l{levels}\n").encode()


SHARED_FILTERS = b"""
sources:
  - name: One
    feed_url: https://one.example/feed
    url_filters: &filters {exclude: ["/sponsored/"]}
  - name: Two
    feed_url: https://two.example/feed
    url_filters: *filters
"""


@pytest.mark.parametrize("data", [_laughs(4), SHARED_FILTERS], ids=["billion-laughs", "alias"])
def test_yaml_anchors_and_aliases_are_refused(data: bytes) -> None:
    # Issue 19, item 6: a 688-byte file of anchors ran `sources import` into a MemoryError.
    with pytest.raises(UnusableSpec, match="anchors/aliases are not allowed in a sources spec"):
        parse_specs(data, "feeds.yaml")


def test_deeply_nested_yaml_is_refused_with_a_message() -> None:
    for data in (b"[" * 100_000, b"sources:\n" + b"".join(b" " * n + b"- \n" for n in range(2000))):
        with pytest.raises(UnusableSpec, match="nested deeper than"):
            parse_specs(data, "feeds.yaml")


def test_opml_in_utf7_declaring_entities_is_refused() -> None:
    # Issue 19, item 11 for OPML: UTF-7 spells `<` as `+ADw-`, hiding `<!ENTITY`.
    text = '<!DOCTYPE o [<!ENTITY a "x">]><opml><body><outline text="&a;" xmlUrl="https://e.example/f"/></body></opml>'
    data = b'<?xml version="1.0" encoding="UTF-7"?>' + text.encode("utf-7").replace(b"<", b"+ADw-")
    with pytest.raises(UnusableSpec, match="declares XML entities"):
        parse_specs(data, "subs.opml")


def test_cli_refuses_a_yaml_bomb_with_exit_2(settings: Settings, tmp_path: Path) -> None:
    spec = tmp_path / "feeds.yaml"
    spec.write_bytes(_laughs(9))  # 9**10 leaves once expanded
    assert len(spec.read_bytes()) < 700
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    result = subprocess.run(
        [sys.executable, "-m", "frontier", "sources", "import", str(spec)],
        env={**env, "FRONTIER_DATABASE_URL": settings.database_url or ""},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2, result.stderr
    assert "anchors/aliases are not allowed" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_shows_a_yaml_syntax_error_on_real_lines(settings: Settings, tmp_path: Path) -> None:
    spec = tmp_path / "feeds.yaml"
    spec.write_text("sources:\n  - name: a\n    feed_url: [x\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRONTIER_")}
    result = subprocess.run(
        [sys.executable, "-m", "frontier", "sources", "import", str(spec)],
        env={**env, "FRONTIER_DATABASE_URL": settings.database_url or ""},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == "frontier: not valid YAML: while parsing a flow sequence", lines
    assert lines[1:4] == ["  line 3, column 15:", "        feed_url: [x", "                  ^"]
    assert "\\n" not in result.stderr and "<byte string>" not in result.stderr


async def test_defaults_are_seeded_once_and_deleted_ones_never_return(db: Database) -> None:
    defaults = default_specs()
    assert defaults.errors == [] and 3 <= len(defaults.specs) <= 20

    first = await seed_defaults(db)
    assert len(first.added) == len(defaults.specs)
    removed = first.added[0]
    await SourceRepository(db).remove(removed)
    second = await seed_defaults(db)

    assert second.added == []
    names = {s.name for s in await SourceRepository(db).list()}
    assert removed not in names and set(first.added[1:]) <= names
    assert await db.fetchval("SELECT count(*) FROM fetch_log") == 0  # only rows inserted


def test_cli_sources_import(settings: Settings, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FRONTIER_DATABASE_URL", settings.database_url or "")
    spec = tmp_path / "feeds.yaml"
    spec.write_bytes(YAML)
    result = CliRunner().invoke(load_commands(), ["sources", "import", str(spec), "--json"])
    assert result.exit_code == 1, result.output
    assert '"added": 2' in result.output and '"failed": 3' in result.output
