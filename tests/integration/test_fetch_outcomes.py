"""Each row of the fetch-outcome table (docs/fetching.md), end to end: a real local site, the real
queue, the safe client, extraction and the PostgreSQL sink."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from aiohttp import web

from fetcher.worker import claimable
from frontier.db import Database
from frontier.sinks import RawDocument
from frontier.sinks.postgres import PostgresSink
from frontier.urls import normalize_url, url_hash
from tests.conditions import wait_until
from tests.fetch_harness import after, article, fetcher_for, frontier_row, host_row, submit
from tests.local_site import LocalSite


async def test_200_is_extracted_stored_and_fetched(db: Database, local_site: LocalSite) -> None:
    local_site.serve("/a", article("Alpha story"), headers={"ETag": '"e1"'})
    await submit(db, local_site.url("/a"), meta={"published": "2026-01-02T03:04:05Z"})
    async with fetcher_for(db) as fetcher:
        assert (await fetcher.run_once()).claimed == 1
    row = await frontier_row(db, local_site.url("/a"))
    assert (row["status"], row["http_status"], row["etag"]) == ("fetched", 200, '"e1"')
    doc = await db.fetchrow("SELECT * FROM raw_content WHERE url_hash = $1", row["url_hash"])
    assert doc is not None
    assert doc["title"] == "Alpha story" and "paragraph 3" in doc["body"]
    assert doc["extractor"] == "generic" and doc["content_hash"] == row["content_hash"]
    assert doc["published_at"].year == 2026 and doc["word_count"] > 50
    logged = await db.fetch("SELECT kind, outcome FROM fetch_log ORDER BY id")
    assert [(r["kind"], r["outcome"]) for r in logged] == [("robots", "not_found"), ("page", "ok")]


async def test_304_keeps_the_document_and_sends_validators(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/a", article("Alpha"), headers={"ETag": '"e1"'})
    await submit(db, local_site.url("/a"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
        await db.execute("UPDATE url_frontier SET status = 'pending', next_fetch_at = now()")
        await db.execute(
            "UPDATE host_state SET pending_count = 1, pending_priority = 5, pending_due_at = now()"
        )
        local_site.serve("/a", b"", status=304)
        assert (await fetcher.run_once()).claimed == 1
    assert local_site.hits("/a")[-1].headers["If-None-Match"] == '"e1"'
    row = await frontier_row(db, local_site.url("/a"))
    assert (row["status"], row["http_status"], row["etag"]) == ("fetched", 304, '"e1"')
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 1


async def test_redirect_is_not_followed_but_submitted(db: Database, local_site: LocalSite) -> None:
    local_site.redirect("/old", "/new", status=301)
    local_site.serve("/new", article("New home"))
    await submit(db, local_site.url("/old"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
        assert local_site.hits("/new") == []  # not followed inline
        row = await frontier_row(db, local_site.url("/old"))
        assert (row["status"], row["dead_reason"]) == ("dead", "redirect")
        assert row["final_url"] == normalize_url(local_site.url("/new"))
        target = await frontier_row(db, local_site.url("/new"))
        assert target["discovery_meta"]["redirect_hops"] == 1
        assert (await fetcher.run_once()).claimed == 1
    assert (await frontier_row(db, local_site.url("/new")))["status"] == "fetched"


async def test_404_and_410_are_dead(db: Database, local_site: LocalSite) -> None:
    local_site.serve("/gone", "bye", status=410)
    await submit(db, local_site.url("/missing"))
    other = await LocalSite(address="127.0.0.2").start()
    try:
        other.serve("/gone", "bye", status=410)
        await submit(db, other.url("/gone"))
        async with fetcher_for(db) as fetcher:
            assert (await fetcher.run_once()).claimed == 2
    finally:
        await other.stop()
    missing = await frontier_row(db, local_site.url("/missing"))
    gone = await frontier_row(db, other.url("/gone"))
    assert (missing["status"], missing["dead_reason"]) == ("dead", "not_found")
    assert (gone["status"], gone["dead_reason"]) == ("dead", "gone")


async def test_429_honours_retry_after_without_counting_an_attempt(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/busy", "slow down", status=429, headers={"Retry-After": "120"})
    await submit(db, local_site.url("/busy"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    row = await frontier_row(db, local_site.url("/busy"))
    host = await host_row(db, row["host"])
    assert (row["status"], row["retry_count"]) == ("pending", 0)
    wait = (row["next_fetch_at"] - row["updated_at"]).total_seconds()
    assert 119 <= wait <= 121
    assert host["backoff_until"] is not None and host["delay_ms"] >= 500


async def test_5xx_and_timeouts_retry_then_die(db: Database, local_site: LocalSite) -> None:
    local_site.serve("/err", "oops", status=500)
    await submit(db, local_site.url("/err"))
    async with fetcher_for(db, max_retries=1) as fetcher:
        await fetcher.run_once()
        row = await frontier_row(db, local_site.url("/err"))
        assert (row["status"], row["retry_count"], row["http_status"]) == ("pending", 1, 500)
        await fetcher.run_once(now=after(3600))  # past the retry's backoff
    row = await frontier_row(db, local_site.url("/err"))
    assert (row["status"], row["dead_reason"]) == ("dead", "max_retries")


async def test_connection_refused_is_retried(db: Database) -> None:
    await submit(db, "http://127.0.0.9:9/nothing-listens")
    async with fetcher_for(db) as fetcher:
        assert (await fetcher.run_once()).claimed == 1
    row = await frontier_row(db, "http://127.0.0.9:9/nothing-listens")
    # robots.txt unreachable: disallowed for now, retried later; the page is not attempted
    assert (row["status"], row["retry_count"]) == ("pending", 0)
    host = await host_row(db, "127.0.0.9:9")
    assert host["robots_status"] == "disallow_all" and host["robots_retry_at"] is not None


async def test_robots_disallow_is_dead_robots_blocked(db: Database, local_site: LocalSite) -> None:
    local_site.serve(
        "/robots.txt", "User-agent: frontier-test\nDisallow: /private\n", content_type="text/plain"
    )
    await submit(db, local_site.url("/private/x"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    row = await frontier_row(db, local_site.url("/private/x"))
    assert (row["status"], row["dead_reason"]) == ("dead", "robots_blocked")
    assert local_site.hits("/private/x") == []


async def test_non_html_and_oversize_are_unsupported(db: Database, local_site: LocalSite) -> None:
    local_site.serve("/doc.pdf", b"%PDF-1.4", content_type="application/pdf")
    local_site.serve("/huge", b"<html>" + b"x" * 2_000_000)
    await submit(db, local_site.url("/doc.pdf"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
        await submit(db, local_site.url("/huge"))
        await fetcher.run_once()
    for path in ("/doc.pdf", "/huge"):
        row = await frontier_row(db, local_site.url(path))
        assert (row["status"], row["dead_reason"]) == ("dead", "unsupported_content"), path


async def test_same_body_under_another_url_is_duplicate_content(
    db: Database, local_site: LocalSite
) -> None:
    page = article("Twin")
    local_site.serve("/one", page)
    local_site.serve("/two", page)
    await submit(db, local_site.url("/one"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
        await submit(db, local_site.url("/two"))
        await fetcher.run_once()
    two = await frontier_row(db, local_site.url("/two"))
    assert (two["status"], two["dead_reason"]) == ("dead", "duplicate_content")
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 1


async def test_source_selectors_and_charset(db: Database, local_site: LocalSite) -> None:
    source_id = await db.fetchval(
        "INSERT INTO sources (name, selectors) VALUES ('sel', $1::jsonb) RETURNING id",
        {"title": "h2.headline", "body": "div.story p", "author": ".byline"},
    )
    words = " ".join(f"mot{i} été" for i in range(40))
    html = (
        f"<html><head><meta charset='iso-8859-1'></head><body><h2 class='headline'>"
        f"Titre é</h2><span class='byline'>Zoé</span><div class='story'><p>{words}</p>"
        f"</div></body></html>"
    ).encode("iso-8859-1")
    local_site.serve("/fr", html, content_type="text/html")
    from frontier.queue import QueueRepository
    from frontier.queue_values import Candidate, SourceRef
    from frontier.states import Origin

    await QueueRepository(db).submit(
        [Candidate(local_site.url("/fr"), SourceRef(source_id, rate_limit_ms=0), Origin.FEED)]
    )
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    doc = await db.fetchrow(
        "SELECT * FROM raw_content WHERE url_hash = $1",
        url_hash(normalize_url(local_site.url("/fr"))),
    )
    assert doc is not None
    assert (doc["title"], doc["author"], doc["extractor"]) == ("Titre é", "Zoé", "selectors")
    assert doc["source_name"] == "sel" and "mot39 été" in doc["body"]


async def test_fetchprotection_zero_is_blocked_by_policy(
    db: Database, local_site: LocalSite
) -> None:
    source_id = await db.fetchval(
        "INSERT INTO sources (name, fetchprotection) VALUES ('closed', 0) RETURNING id"
    )
    from frontier.queue import QueueRepository
    from frontier.queue_values import Candidate, SourceRef
    from frontier.states import Origin

    await QueueRepository(db).submit(
        [Candidate(local_site.url("/x"), SourceRef(source_id, rate_limit_ms=0), Origin.FEED)]
    )
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    row = await frontier_row(db, local_site.url("/x"))
    assert (row["status"], row["dead_reason"]) == ("dead", "blocked_by_policy")
    assert local_site.requests == []


@pytest.mark.parametrize("failure", ["unavailable", "unplanned"])
async def test_sink_down_puts_urls_back_to_pending(
    db: Database, local_site: LocalSite, failure: str
) -> None:
    """A sink that says it is down, or one failing in a way nobody planned for (here a
    permission refused, as a PostgreSQL sink under the wrong role meets): the URL waits with
    backoff and no attempt counted, never a hot loop of claims and never a dead URL."""
    import asyncpg

    from frontier.sinks import SinkUnavailable

    class DownSink:
        name = "down"

        async def write(self, documents: object) -> None:
            if failure == "unavailable":
                raise SinkUnavailable("connection refused")
            raise asyncpg.InsufficientPrivilegeError("permission denied for table raw_content")

        async def close(self) -> None:
            pass

    local_site.serve("/a", article("A"))
    await submit(db, local_site.url("/a"))
    async with fetcher_for(db, sink=DownSink()) as fetcher:
        await fetcher.run_once()
    row = await frontier_row(db, local_site.url("/a"))
    assert (row["status"], row["retry_count"], row["fetch_count"]) == ("pending", 0, 0)
    assert (row["next_fetch_at"] - row["updated_at"]).total_seconds() >= 50
    expected = "connection refused" if failure == "unavailable" else "permission denied"
    assert expected in row["last_error"]
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 0


async def test_slow_handler_times_out_and_is_retried(db: Database, local_site: LocalSite) -> None:
    import asyncio

    release = asyncio.Event()

    async def stall(_request: web.Request) -> web.StreamResponse:
        await release.wait()
        return web.Response(text="late")

    local_site.route("/slow", stall)
    await submit(db, local_site.url("/slow"))
    try:
        async with fetcher_for(db, timeout_s=0.5) as fetcher:
            await fetcher.run_once()
    finally:
        release.set()
    row = await frontier_row(db, local_site.url("/slow"))
    assert (row["status"], row["retry_count"]) == ("pending", 1)
    assert "timed out" in (row["last_error"] or "")


async def test_a_completion_refused_after_the_lease_was_lost_is_not_logged(
    db: Database, local_site: LocalSite
) -> None:
    """The reaper took the URL back while its page was being stored: that completion did
    not happen, so it leaves no `ok` row; the next claim's fetch is the one logged."""
    from frontier.queue import QueueRepository
    from frontier.queue_values import QueuePolicy

    class ReapedWhileStoring(PostgresSink):
        reaped = 0

        async def write(self, documents: Sequence[RawDocument]) -> None:
            if not self.reaped:
                await db.execute("UPDATE url_frontier SET lease_until = now() - interval '1 s'")
                self.reaped = (await QueueRepository(db, QueuePolicy()).reap()).returned
            await super().write(documents)

    local_site.serve("/a", article("A"))
    await submit(db, local_site.url("/a"))
    sink = ReapedWhileStoring(db)
    async with fetcher_for(db, sink=sink) as fetcher:
        await fetcher.run_once()
        assert sink.reaped == 1
        assert (await frontier_row(db, local_site.url("/a")))["status"] == "pending"
        assert await db.fetchval("SELECT count(*) FROM fetch_log WHERE kind = 'page'") == 0
        assert (await fetcher.run_once(now=after(600))).claimed == 1  # past the host lease
    assert (await frontier_row(db, local_site.url("/a")))["status"] == "fetched"
    rows = await db.fetch("SELECT outcome FROM fetch_log WHERE kind = 'page'")
    assert [r["outcome"] for r in rows] == ["ok"]
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 1


async def test_the_same_body_in_two_batches_at_once_is_stored_once(
    db: Database, local_site: LocalSite
) -> None:
    """Two batches in flight together (as the claim loop runs them): the database check sees
    only completed URLs, so the process remembers what it stores."""
    page = article("Twin at once")
    local_site.serve("/first", page)
    local_site.serve("/second", page)
    await submit(db, local_site.url("/first"), local_site.url("/second"))
    async with fetcher_for(db) as fetcher:
        first, second = await fetcher.claim(1), await fetcher.claim(1)
        assert len(first) == len(second) == 1
        await asyncio.gather(fetcher.process(first), fetcher.process(second))
    rows = [await frontier_row(db, local_site.url(p)) for p in ("/first", "/second")]
    assert sorted((r["status"], r["dead_reason"]) for r in rows) == [
        ("dead", "duplicate_content"),
        ("fetched", None),
    ]
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 1


async def test_pages_done_are_stored_while_a_slow_one_of_their_batch_goes_on(
    db: Database, local_site: LocalSite
) -> None:
    """A batch is stored and completed in groups as its pages are done: a page done while
    another of its batch is still fetched (or extracted, up to its limit) waits for it a
    second at most (BatchPipeline.waves)."""
    release = asyncio.Event()

    async def stall(_request: web.Request) -> web.StreamResponse:
        await release.wait()
        return web.Response(text=article("The late one", word="late"), content_type="text/html")

    local_site.route("/slow", stall)
    quick = [f"/quick-{i}" for i in range(3)]
    for path in quick:
        local_site.serve(path, article(f"Quick {path}", word=path.strip("/")))
    await submit(db, local_site.url("/slow"), *(local_site.url(p) for p in quick))

    async def quick_ones_fetched() -> bool:
        rows = [await frontier_row(db, local_site.url(p)) for p in quick]
        return all(row["status"] == "fetched" for row in rows)

    async with fetcher_for(db, timeout_s=60) as fetcher:
        claims = [c for _ in range(4) for c in await fetcher.claim(10)]
        assert len(claims) == 4  # one batch: the host has no delay
        batch = asyncio.create_task(fetcher.process(claims))
        try:
            await wait_until(quick_ones_fetched, what="the quick pages completed")
            assert not batch.done()  # the slow page is still being fetched
            assert (await frontier_row(db, local_site.url("/slow")))["status"] == "fetching"
            stored = await db.fetchval("SELECT count(*) FROM raw_content")
            assert stored == len(quick)
        finally:
            release.set()
        summary = await batch
    assert summary.outcomes["fetched"] == 4
    assert (await frontier_row(db, local_site.url("/slow")))["status"] == "fetched"


async def test_claims_stop_while_the_pages_being_stored_hold_their_bound(
    db: Database, local_site: LocalSite
) -> None:
    """Pages waiting on a slow sink hold their documents: once they hold what the pages
    being requested could (concurrency x the largest body), the loop claims no more,
    though the count of held claims would allow six times the concurrency; nothing is
    lost once the sink is back."""

    class SlowSink(PostgresSink):
        def __init__(self) -> None:
            super().__init__(db)
            self.back = asyncio.Event()

        async def write(self, documents: Sequence[RawDocument]) -> None:
            await self.back.wait()
            await super().write(documents)

    paths = [f"/heavy-{i}" for i in range(12)]
    for path in paths:  # about 60 KB a page, twice that held (its body and paragraphs)
        local_site.serve(path, article(f"Heavy {path}", paragraphs=400, word=path.strip("/")))
    await submit(db, *(local_site.url(p) for p in paths))
    sink = SlowSink()
    claimed = "SELECT count(*) FROM url_frontier WHERE status = 'fetching'"
    stop = asyncio.Event()
    async with fetcher_for(
        db, sink=sink, concurrency=2, batch_size=1, max_body_bytes=128 * 1024
    ) as fetcher:
        bound = fetcher.held_bytes_bound

        async def stopped_or_all_claimed() -> bool:
            if await db.fetchval(claimed) == len(paths):
                return True
            return fetcher.fetching == 0 and fetcher.held_bytes >= bound

        async def all_fetched() -> bool:
            done = "SELECT count(*) FROM url_frontier WHERE status = 'fetched'"
            return await db.fetchval(done) == len(paths)

        run = asyncio.create_task(fetcher.run(stop=stop))
        try:
            await wait_until(stopped_or_all_claimed, what="the claims stopped")
            # three pages reach the bound; at most the two being requested then join them
            assert await db.fetchval(claimed) <= 5
            assert fetcher.held_bytes >= bound
            sink.back.set()
            await wait_until(all_fetched, what="every page fetched")
        finally:
            sink.back.set()
            stop.set()
            await run
        assert fetcher.held_bytes == 0
    assert await db.fetchval("SELECT count(*) FROM raw_content") == len(paths)


async def test_claims_count_against_the_concurrency_before_their_batch_runs(
    db: Database, local_site: LocalSite
) -> None:
    """The claim loop counts its free slots again as soon as it has started a batch's task:
    the batch's claims must count from then, not from the task's first step, or the next
    claim takes their slots too (a whole batch over the concurrency)."""
    local_site.serve("/a", article("Counted at once"))
    await submit(db, local_site.url("/a"))
    async with fetcher_for(db, concurrency=2) as fetcher:
        claims = await fetcher.claim(1)
        task = fetcher.start(claims)
        assert not task.done()
        assert fetcher.fetching == 1 and set(fetcher.in_flight) == {claims[0].url_hash}
        assert claimable(2, fetcher.fetching, len(fetcher.in_flight)) == 1
        await task
        assert fetcher.fetching == 0 and not fetcher.in_flight
    assert (await frontier_row(db, local_site.url("/a")))["status"] == "fetched"


async def test_the_claim_loop_has_at_most_its_concurrency_in_flight(
    db: Database, local_site: LocalSite
) -> None:
    """Requests that do not end hold every slot: the loop claims no more than the
    concurrency (one URL a claim here), however fast it claims again."""
    release = asyncio.Event()
    seen: list[str] = []

    async def stall(request: web.Request) -> web.StreamResponse:
        seen.append(request.path)
        await release.wait()
        return web.Response(text=article(request.path), content_type="text/html")

    paths = [f"/held-{i}" for i in range(5)]
    for path in paths:
        local_site.route(path, stall)
    await submit(db, *(local_site.url(p) for p in paths))
    stop = asyncio.Event()
    async with fetcher_for(db, concurrency=2, batch_size=1, timeout_s=60) as fetcher:
        run = asyncio.create_task(fetcher.run(stop=stop))
        try:
            await wait_until(lambda: len(seen) >= 2, what="two requests held")
            claimed = "SELECT count(*) FROM url_frontier WHERE status = 'fetching'"
            assert await db.fetchval(claimed) == 2
            assert fetcher.fetching == 2 and len(seen) == 2
        finally:
            release.set()
            stop.set()
            await run
