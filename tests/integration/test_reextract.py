"""`frontier reextract` (issue 30 item 3) against the real database and a local site: after
a source's extraction rule changed, a re-extraction from the WARC archive rewrites exactly
the documents whose text changed, the server seeing no request; `--dry-run` counts them
and writes nothing; the command line prints the summary as JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from fetcher.reextract import run_reextract
from frontier import near_duplicates as nd
from frontier.api.app import create_app
from frontier.db import Database
from frontier.documents import DocumentFilter
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy, SourceRef
from frontier.settings import Settings
from frontier.states import Origin
from frontier.urls import normalize_url, url_hash
from tests.fetch_harness import fetcher_for, frontier_row
from tests.local_site import LocalSite

STORY = " ".join(f"story word{i} reported" for i in range(60))
EXTRA = " ".join(f"correction note{i} appended" for i in range(30))


def page(title: str, *, extra: bool, head: str = "") -> str:
    aside = f"<div class='extra'><p>{EXTRA} {title}</p></div>" if extra else ""
    return (
        f"<html><head><title>{title}</title>{head}</head><body><h2 class='headline'>{title}</h2>"
        f"<div class='story'><p>{STORY} {title}</p></div>{aside}</body></html>"
    )


async def stored(db: Database, url: str) -> dict[str, Any]:
    row = await db.fetchrow(
        "SELECT * FROM raw_content WHERE url_hash = $1", url_hash(normalize_url(url))
    )
    assert row is not None, url
    return dict(row)


async def crawl(
    db: Database, site: LocalSite, archive: Path, head: str = ""
) -> tuple[Any, list[str]]:
    """Three pages of a source whose selectors read `div.story` only: /a and /b also have
    a `div.extra`, /c has none."""
    source_id = await db.fetchval(
        "INSERT INTO sources (name, selectors) VALUES ('sel', $1::jsonb) RETURNING id",
        {"title": "h2.headline", "body": "div.story p"},
    )
    paths = ["/a", "/b", "/c"]
    for path in paths:
        site.serve(path, page(f"Title {path[1:]}", extra=path != "/c", head=head))
    site.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")
    ref = SourceRef(source_id, rate_limit_ms=0)
    await QueueRepository(db, QueuePolicy(default_delay_ms=0)).submit(
        [Candidate(site.url(p), ref, Origin.FEED) for p in paths]
    )
    async with fetcher_for(db, archive_dir=archive) as fetcher:
        while (await fetcher.run_once()).claimed:
            pass
        await fetcher.close()
    urls = [site.url(p) for p in paths]
    for url in urls:
        assert EXTRA not in (await stored(db, url))["body"]
    # The rule changes: the body is the story and the extra paragraphs.
    await db.execute(
        "UPDATE sources SET selectors = $2::jsonb WHERE id = $1",
        source_id,
        {"title": "h2.headline", "body": "div.story p, div.extra p"},
    )
    return source_id, urls


async def test_reextract_after_a_changed_rule_rewrites_exactly_the_changed_documents(
    db: Database, settings: Settings, local_site: LocalSite
) -> None:
    source_id, (a, b, c) = await crawl(db, local_site, settings.home / "archive")
    requests = len(local_site.requests)
    before = {url: await stored(db, url) for url in (a, b, c)}
    where = DocumentFilter(source_id=source_id)

    dry = await run_reextract(settings, db, where, dry_run=True, extract_processes=0)
    assert (dry.examined, dry.changed, dry.unchanged, dry.failed) == (3, 2, 1, 0)
    assert {url: await stored(db, url) for url in (a, b, c)} == before  # nothing written

    done = await run_reextract(settings, db, where, extract_processes=0)
    assert (done.examined, done.changed, done.unchanged, done.failed) == (3, 2, 1, 0)
    assert len(local_site.requests) == requests  # no request at all
    for url in (a, b):
        after = await stored(db, url)
        assert EXTRA in after["body"] and after["content_hash"] != before[url]["content_hash"]
        # the same response: its time and archive record are kept
        assert after["fetched_at"] == before[url]["fetched_at"]
        assert after["warc_record_id"] == before[url]["warc_record_id"]
        # the frontier row knows the new text (the next revisit compares with it)
        assert (await frontier_row(db, url))["content_hash"] == after["content_hash"]
        # the text it replaced is kept as version 1
        kept = await db.fetch(
            "SELECT version, content_hash, body FROM document_versions WHERE url_hash = $1",
            after["url_hash"],
        )
        assert [(k["version"], k["content_hash"]) for k in kept] == [
            (1, before[url]["content_hash"])
        ]
        assert kept[0]["body"] == before[url]["body"]
    assert await stored(db, c) == before[c]

    again = await run_reextract(settings, db, where, extract_processes=0)
    assert (again.changed, again.unchanged) == (0, 3)  # a second run finds nothing new


async def test_reextract_rewrites_a_fingerprint_of_an_earlier_minhash(
    db: Database, settings: Settings, local_site: LocalSite
) -> None:
    """A fingerprint made by an earlier version of the MinHash agrees with no new one: a
    re-extraction rewrites it, in the document and in the near-duplicate lookup, though
    the text is the same."""
    source_id, (_, _, c) = await crawl(db, local_site, settings.home / "archive")
    before = await stored(db, c)
    today = before["minhash"]
    earlier = bytes(range(4 * nd.BINS)).hex()  # another MinHash's value for the same text
    await db.execute("UPDATE raw_content SET minhash = $1", earlier)
    await db.execute("UPDATE near_duplicates SET minhash = $1", bytes.fromhex(earlier))

    done = await run_reextract(
        settings, db, DocumentFilter(source_id=source_id), extract_processes=0
    )
    assert (done.examined, done.changed, done.unchanged, done.failed) == (3, 3, 0, 0)
    after = await stored(db, c)
    assert after["minhash"] == today and after["content_hash"] == before["content_hash"]
    recorded = await db.fetchval(
        "SELECT minhash FROM near_duplicates WHERE url_hash = $1", after["url_hash"]
    )
    assert bytes(recorded) == bytes.fromhex(today)


async def test_reextract_command_prints_a_json_summary(
    db: Database, settings: Settings, local_site: LocalSite
) -> None:
    await crawl(db, local_site, settings.home / "archive")
    requests = len(local_site.requests)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(sys.path),
        "FRONTIER_DATABASE_URL": settings.database_url or "",
        "FRONTIER_HOME": str(settings.home),
        "FRONTIER_EXTRACT_PROCESSES": "1",
    }
    run = subprocess.run(
        [sys.executable, "-m", "frontier", "reextract", "--host", local_site.url("/"), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert (summary["examined"], summary["changed"], summary["unchanged"]) == (3, 2, 1)
    assert len(local_site.requests) == requests

    refused = subprocess.run(
        [sys.executable, "-m", "frontier", "reextract"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert refused.returncode == 2 and "--all" in refused.stderr


async def test_reextract_over_the_api_needs_the_token_and_a_selection(
    db: Database, settings: Settings, local_site: LocalSite
) -> None:
    await crawl(db, local_site, settings.home / "archive")
    requests = len(local_site.requests)
    token = "t" * 32
    app = create_app(settings.model_copy(update={"api_token": token}), db, reextract=run_reextract)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as api:
        body = {"host": local_site.url("/"), "dry_run": True}
        assert (await api.post("/api/v1/reextract", json=body)).status_code == 401
        auth = {"Authorization": f"Bearer {token}"}
        refused = await api.post("/api/v1/reextract", json={"dry_run": True}, headers=auth)
        assert refused.status_code == 422 and "all" in refused.text
        dry = await api.post("/api/v1/reextract", json=body, headers=auth)
        assert dry.status_code == 200, dry.text
        assert (dry.json()["changed"], dry.json()["dry_run"]) == (2, True)
        done = await api.post("/api/v1/reextract", json={"all": True}, headers=auth)
        assert done.status_code == 200, done.text
        assert (done.json()["changed"], done.json()["unchanged"]) == (2, 1)
    assert len(local_site.requests) == requests


async def test_reextract_over_an_api_without_the_function_answers_501(
    db: Database, settings: Settings
) -> None:
    """The API imports no service: an app the edge gave no reextract function says so."""
    token = "t" * 32
    app = create_app(settings.model_copy(update={"api_token": token}), db)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as api:
        auth = {"Authorization": f"Bearer {token}"}
        answer = await api.post("/api/v1/reextract", json={"all": True}, headers=auth)
    assert answer.status_code == 501
    assert answer.json()["error"]["code"] == "not_implemented"
    assert "cannot re-extract" in answer.json()["error"]["message"]


async def test_reextract_goes_through_the_duplicate_checks_of_a_fetch(
    db: Database, settings: Settings, local_site: LocalSite
) -> None:
    """Two pages whose texts differ only outside `div.story`: once the rule reads only
    `div.story`, they are the same article, and one URL holds it, as after a fetch."""
    source_id = await db.fetchval(
        "INSERT INTO sources (name, selectors) VALUES ('sel', $1::jsonb) RETURNING id",
        {"title": "h2.headline", "body": "div.story p, div.extra p"},
    )
    shared = page("Same story", extra=False).replace("</body>", "{extra}</body>")
    for path in ("/one", "/two"):
        local_site.serve(
            path, shared.format(extra=f"<div class='extra'><p>{EXTRA} {path}</p></div>")
        )
    local_site.serve("/robots.txt", "User-agent: *\nAllow: /\n", content_type="text/plain")
    one, two = local_site.url("/one"), local_site.url("/two")
    await QueueRepository(db, QueuePolicy(default_delay_ms=0)).submit(
        [Candidate(u, SourceRef(source_id, rate_limit_ms=0), Origin.FEED) for u in (one, two)]
    )
    async with fetcher_for(db, archive_dir=settings.home / "archive") as fetcher:
        while (await fetcher.run_once()).claimed:
            pass
        await fetcher.close()
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 2
    await db.execute(
        "UPDATE sources SET selectors = $2::jsonb WHERE id = $1",
        source_id,
        {"title": "h2.headline", "body": "div.story p"},
    )
    done = await run_reextract(
        settings, db, DocumentFilter(source_id=source_id), extract_processes=0
    )
    assert (done.changed, done.duplicates) == (1, 1)
    holder = await db.fetchrow("SELECT url, body FROM raw_content")
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 1
    assert holder is not None and EXTRA not in holder["body"]
    other = two if holder["url"] == one else one
    row = await frontier_row(db, other)
    assert (row["status"], row["dead_reason"], row["final_url"]) == (
        "dead",
        "duplicate_content",
        holder["url"],
    )


async def test_reextract_applies_the_verdicts_of_a_fetch(
    db: Database, settings: Settings, local_site: LocalSite
) -> None:
    """A page whose robots meta says noindex to another crawler's name is stored; once our
    user agent is that crawler's, a re-extraction finds the noindex meant for us and the
    document goes, as on a revisit (the verdicts of the fetch pipeline apply)."""
    source_id, _ = await crawl(
        db, local_site, settings.home / "archive", head="<meta name='newsbot' content='noindex'>"
    )
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 3
    renamed = settings.model_copy(update={"user_agent": "newsbot/2.0 (+http://example.org/bot)"})
    done = await run_reextract(
        renamed, db, DocumentFilter(source_id=source_id), extract_processes=0
    )
    assert (done.failed, done.outcomes) == (3, {"noindex": 3})
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 0
