"""Revisits against the real database and the zoo's sites (tests/zoo/revisits.py): a source
with `revisit: [1h, 6h]` has each article fetched again 1 h after its first fetch and 6 h
after that, with the stored validators; a 304 and an unchanged text write nothing, a
changed text replaces the document under the same id, and after the last step the URL is
never claimed again. Status counts show the revisits apart from first fetches."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from frontier.db import Database
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy
from frontier.source_schema import parse_config
from frontier.sources import Source, SourceRepository
from frontier.states import Origin
from frontier.stats import StatsRepository
from tests.fetch_harness import after, article, fetcher_for, frontier_row
from tests.local_site import LocalSite
from tests.zoo.revisits import NginxStatic, WordPressPost

HOUR = 3600


async def revisited_source(db: Database, steps: list[str]) -> Source:
    return await SourceRepository(db).create(parse_config({"name": "Gazette", "revisit": steps}))


async def submit_to(db: Database, source: Source, url: str) -> None:
    result = await QueueRepository(db, QueuePolicy(default_delay_ms=0)).submit(
        [Candidate(url, source.ref, Origin.FEED)]
    )
    assert result.inserted == 1


async def document(db: Database, url: str) -> dict[str, Any]:
    row = await frontier_row(db, url)
    records = await db.fetch("SELECT * FROM raw_content")
    assert [r["url_hash"] for r in records] == [row["url_hash"]]  # one document, its id
    return dict(records[0])


async def page_log(db: Database) -> list[tuple[str, str, int | None]]:
    rows = await db.fetch(
        "SELECT kind, outcome, http_status FROM fetch_log WHERE kind <> 'robots' ORDER BY id"
    )
    return [(r["kind"], r["outcome"], r["http_status"]) for r in rows]


async def test_nginx_304_writes_nothing_an_edit_replaces_the_document_and_the_schedule_ends(
    db: Database, local_site: LocalSite
) -> None:
    source = await revisited_source(db, ["1h", "6h"])
    page = NginxStatic(local_site, "/2026/11/harbour.html", article("Harbour reopens"))
    url = local_site.url(page.path)
    await submit_to(db, source, url)

    async with fetcher_for(db) as fetcher:
        assert (await fetcher.run_once()).claimed == 1
        first = await document(db, url)
        row = await frontier_row(db, url)
        assert (row["status"], row["revisit_step"], row["etag"]) == ("pending", 1, page.etag)
        assert row["next_fetch_at"] - row["last_fetched_at"] == timedelta(hours=1)
        host = await db.fetchrow("SELECT * FROM host_state WHERE host = $1", row["host"])
        assert (host["pending_count"], host["pending_due_at"]) == (1, row["next_fetch_at"])
        assert (await fetcher.run_once(now=after(HOUR - 60))).claimed == 0  # not due yet

        # Revisit 1: the file is unchanged; nginx answers the validator with 304.
        assert (await fetcher.run_once(now=after(HOUR + 5))).claimed == 1
        assert local_site.hits(page.path)[-1].headers["If-None-Match"] == page.etag
        assert await document(db, url) == first  # nothing written
        row = await frontier_row(db, url)
        assert (row["status"], row["revisit_step"]) == ("pending", 2)
        assert row["content_hash"] == first["content_hash"]

        # Revisit 2 (6 h after the first revisit): the article was edited.
        page.edit(article("Harbour reopens after repairs", word="update"))
        assert (await fetcher.run_once(now=after(HOUR + 6 * HOUR - 60))).claimed == 0
        assert (await fetcher.run_once(now=after(7 * HOUR + 10))).claimed == 1
        replaced = await document(db, url)
        assert replaced["title"] == "Harbour reopens after repairs"
        assert "update of the day" in replaced["body"]
        assert replaced["content_hash"] != first["content_hash"]
        row = await frontier_row(db, url)
        assert (row["status"], row["etag"]) == ("fetched", page.etag)  # the schedule is done
        assert row["content_hash"] == replaced["content_hash"]

        # Never again, however late.
        assert (await fetcher.run_once(now=after(90 * 24 * HOUR))).claimed == 0

    assert len(local_site.hits(page.path)) == 3
    assert await page_log(db) == [
        ("page", "ok", 200),
        ("revisit", "not_modified", 304),
        ("revisit", "ok", 200),
    ]


async def test_wordpress_without_validators_same_text_writes_nothing(
    db: Database, local_site: LocalSite
) -> None:
    source = await revisited_source(db, ["1h"])
    post = WordPressPost(local_site, "/2026/11/24/council-vote/", "Council vote")
    url = local_site.url(post.path)
    await submit_to(db, source, url)

    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
        first = await document(db, url)
        assert (await fetcher.run_once(now=after(HOUR + 5))).claimed == 1

    # The bytes differed (a new nonce); the text did not: nothing written, not a duplicate.
    assert await document(db, url) == first
    row = await frontier_row(db, url)
    assert (row["status"], row["dead_reason"], row["revisit_step"]) == ("fetched", None, 1)
    assert await page_log(db) == [("page", "ok", 200), ("revisit", "not_modified", 200)]
    assert len(local_site.hits(post.path)) == 2


async def test_wordpress_with_last_modified_answers_304_then_an_update_is_stored(
    db: Database, local_site: LocalSite
) -> None:
    source = await revisited_source(db, ["1h", "1h"])
    post = WordPressPost(local_site, "/2026/11/24/storm/", "Storm warning", last_modified=True)
    url = local_site.url(post.path)
    await submit_to(db, source, url)

    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
        first = await document(db, url)
        await fetcher.run_once(now=after(HOUR + 5))
        assert "If-Modified-Since" in local_site.hits(post.path)[-1].headers
        assert await document(db, url) == first
        post.update("Storm warning lifted", "forecast")
        await fetcher.run_once(now=after(2 * HOUR + 10))

    updated = await document(db, url)
    assert updated["title"] == "Storm warning lifted" and "forecast" in updated["body"]
    assert await page_log(db) == [
        ("page", "ok", 200),
        ("revisit", "not_modified", 304),
        ("revisit", "ok", 200),
    ]


async def test_a_source_without_a_schedule_is_never_revisited(
    db: Database, local_site: LocalSite
) -> None:
    source = await SourceRepository(db).create(parse_config({"name": "Plain"}))
    page = NginxStatic(local_site, "/a.html", article("Once"))
    await submit_to(db, source, local_site.url(page.path))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
        assert (await fetcher.run_once(now=after(30 * 24 * HOUR))).claimed == 0
    row = await frontier_row(db, local_site.url(page.path))
    assert (row["status"], row["revisit_step"]) == ("fetched", 0)


async def test_status_counts_revisits_apart_from_first_fetches(
    db: Database, local_site: LocalSite
) -> None:
    source = await revisited_source(db, ["1h", "1h"])
    pages = [NginxStatic(local_site, f"/{i}.html", article(f"Story {i}")) for i in range(3)]
    for page in pages:
        await submit_to(db, source, local_site.url(page.path))
    stats = StatsRepository(db)

    async with fetcher_for(db) as fetcher:
        while (await fetcher.run_once()).claimed:
            pass
        waiting = await stats.stats(now=after(60))
        assert waiting.as_json()["revisits"] == {"waiting": 3, "due_now": 0, "outcomes": {}}
        assert waiting.page_outcomes == {"ok": 3}
        assert (await stats.stats(now=after(HOUR + 5))).revisits.due_now == 3
        pages[0].edit(article("Story 0, corrected"))
        while (await fetcher.run_once(now=after(HOUR + 5))).claimed:
            pass

    done = await stats.stats(now=after(HOUR + 5))
    assert (done.revisits.waiting, done.revisits.due_now) == (3, 0)
    assert done.revisits.outcomes == {"not_modified": 2, "ok": 1}
    assert done.page_outcomes == {"ok": 3}
    assert done.as_json()["revisits"]["outcomes"] == {"not_modified": 2, "ok": 1}


async def test_a_revisit_that_says_noindex_removes_the_document(
    db: Database, local_site: LocalSite
) -> None:
    """Google drops a page from its index when a recrawl finds `noindex`; so does the sink."""
    source = await revisited_source(db, ["1h"])
    path = "/2026/11/27/withdrawn-story"
    local_site.serve(path, article("Withdrawn story"))
    url = local_site.url(path)
    await submit_to(db, source, url)

    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
        await document(db, url)
        local_site.serve(path, article("Withdrawn story"), headers={"X-Robots-Tag": "noindex"})
        assert (await fetcher.run_once(now=after(HOUR + 5))).claimed == 1

    row = await frontier_row(db, url)
    assert (row["status"], row["dead_reason"]) == ("dead", "noindex")
    assert await db.fetch("SELECT url FROM raw_content") == []
    assert await page_log(db) == [("page", "ok", 200), ("revisit", "noindex", 200)]
