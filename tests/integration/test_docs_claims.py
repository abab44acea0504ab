"""Three claims of README.md and docs/operations.md, quoted and then run as a user would
run them: each test first checks that the docs still say it."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from frontier.clock import utcnow
from frontier.db import Database
from frontier.sinks import RawDocument
from frontier.sinks.postgres import PostgresSink
from frontier.sources import SourceRepository
from frontier.urls import normalize_url, url_hash
from tests.processes import REPO, frontier_env, frontier_output


def said(doc: str, claim: str) -> None:
    text = " ".join((REPO / doc).read_text(encoding="utf-8").split())
    assert claim in text, f"{doc} no longer says: {claim}"


async def test_search_needs_every_word_minus_excludes_and_no_stemming(
    db: Database, fresh_dsn: str
) -> None:
    said(
        "docs/operations.md",
        "`--search` needs every word in the title or the body (quotes make a phrase, `-word` "
        "excludes one)",
    )
    said("docs/operations.md", "without stemming, so `bridge` does not find `bridges`")
    manual = (await SourceRepository(db).get("manual")).id
    texts = {
        "Harbour bridge reopens": "The harbour bridge reopened on Monday.",
        "Harbour market": "The harbour market sold fish and bridges of bread.",
        "Bridge toll": "A bridge toll was voted down.",
    }
    docs = []
    for i, (title, body) in enumerate(texts.items()):
        url = normalize_url(f"https://news.example/story/{i}")
        docs.append(
            RawDocument(
                url_hash=url_hash(url), url=url, final_url=None, source_id=manual,
                source_name="manual", host="news.example", origin="manual", title=title,
                body=body, summary=None, author=None, published_at=None, image_url=None,
                language="en", content_hash=None, word_count=len(body.split()),
                extractor="generic", http_status=200, fetched_at=utcnow(),
            )
        )  # fmt: skip
    await PostgresSink(db).write(docs)
    env = frontier_env(fresh_dsn)

    async def titles(search: str) -> set[str]:
        code, out, err = await frontier_output("documents", "--search", search, "--json", env=env)
        assert code == 0, err
        return {item["title"] for item in json.loads(out)["items"]}

    assert await titles("harbour bridge") == {"Harbour bridge reopens"}  # every word
    assert await titles("bridge -harbour") == {"Bridge toll"}  # -word excludes
    assert await titles("bridges") == {"Harbour market"}  # not `bridge`: no stemming


async def test_sources_import_reports_each_bad_entry_and_exits_1(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    said("README.md", "import sources from a YAML feeds spec")
    said("README.md", "or OPML; per-entry errors, exit 1 if any")
    spec = tmp_path / "feeds.yaml"
    spec.write_text(
        "sources:\n"
        "  - name: good-feed\n    feed_url: https://good.example/rss\n"
        "  - name: bad-feed\n    feed_url: https://bad.example/rss\n    priority: 99\n"
    )
    code, out, err = await frontier_output(
        "sources", "import", str(spec), env=frontier_env(fresh_dsn)
    )
    assert code == 1, out + err
    assert "added 1 sources, 1 failed" in out and "bad-feed" in out + err
    names = {s.name for s in await SourceRepository(db).list()}
    assert "good-feed" in names and "bad-feed" not in names


async def test_import_from_standard_input_exits_1_when_a_line_is_rejected(
    db: Database, fresh_dsn: str
) -> None:
    said("README.md", "stream URLs in from a file or standard input")
    said("README.md", "accepted, duplicate and rejected lines (exit 1 if any line was rejected)")
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "frontier", "import", "-", "--json",
        env=frontier_env(fresh_dsn), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    lines = b"https://in.example/a\nhttps://in.example/a\nnot a url\n"
    out, err = await asyncio.wait_for(child.communicate(lines), 120)
    assert child.returncode == 1, err.decode()
    summary = json.loads(out)
    assert (summary["accepted"], summary["duplicate"], summary["rejected"]) == (1, 1, 1)
    assert await db.fetchval("SELECT count(*) FROM url_frontier WHERE host = 'in.example'") == 1
