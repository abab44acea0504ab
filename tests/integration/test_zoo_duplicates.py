"""The CMS zoo, duplicates: one article reached under several URLs (WordPress sharing and
referral parameters, the AMP plugin's `?amp=1` and `/amp/` views, a Drupal node with a
session id, a syndication partner) is stored once, under the URL its site names canonical,
at no more requests than a browser makes, and no URL a browser shows ends in an error."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from frontier.db import Database
from frontier.urls import normalize_url, url_hash, url_host
from tests.fetch_harness import after, fetcher_for, frontier_row, host_row, submit
from tests.local_site import LocalSite
from tests.zoo import duplicates as zoo

TITLE = "Ferry timetable approved"


async def documents(db: Database) -> list[dict[str, object]]:
    return [dict(r) for r in await db.fetch("SELECT * FROM raw_content ORDER BY url")]


async def drain(db: Database, rounds: int = 6) -> None:
    """Fetch until nothing is due (each round a batch; one URL per host per batch)."""
    async with fetcher_for(db) as fetcher:
        for _ in range(rounds):
            if (await fetcher.run_once(now=after(1))).claimed == 0:
                return


async def test_a_sharing_link_fetched_first_is_stored_as_the_permalink(
    db: Database, local_site: LocalSite
) -> None:
    permalink = local_site.url("/2026/05/ferry-timetable/")
    page = zoo.wordpress_post(TITLE, permalink)
    zoo.serve_post(
        local_site, ["/2026/05/ferry-timetable/?share=twitter", "/2026/05/ferry-timetable/"], page
    )
    await submit(db, local_site.url("/2026/05/ferry-timetable/?share=twitter"))
    await drain(db)
    identity = normalize_url(permalink)
    [doc] = await documents(db)
    assert (doc["url"], doc["url_hash"]) == (identity, url_hash(identity))
    # The permalink was fetched itself (the variant submitted it) and names itself.
    assert doc["final_url"] is None
    assert TITLE in str(doc["title"])
    assert zoo.STORY in str(doc["body"])
    variant = await frontier_row(db, local_site.url("/2026/05/ferry-timetable/?share=twitter"))
    assert (variant["status"], variant["dead_reason"]) == ("dead", "duplicate_content")
    assert variant["final_url"] == identity
    canonical = await frontier_row(db, permalink)
    assert (canonical["status"], canonical["content_hash"]) == ("fetched", doc["content_hash"])
    assert local_site.hits("/2026/05/ferry-timetable") != []
    # The feed lists the permalink afterwards: known and fetched, not requested again.
    await submit(db, permalink)
    await drain(db)
    assert len([r for r in local_site.requests if r.path != "/robots.txt"]) == 2
    assert len(await documents(db)) == 1


async def test_amp_views_of_a_stored_post_are_duplicates_of_it(
    db: Database, local_site: LocalSite
) -> None:
    permalink = local_site.url("/2026/05/ferry-timetable/")
    zoo.serve_post(local_site, ["/2026/05/ferry-timetable"], zoo.wordpress_post(TITLE, permalink))
    amp = zoo.wordpress_amp(TITLE, permalink)
    zoo.serve_post(
        local_site, ["/2026/05/ferry-timetable/amp", "/2026/05/ferry-timetable?amp=1"], amp
    )
    await submit(db, permalink)
    await drain(db)
    await submit(
        db,
        local_site.url("/2026/05/ferry-timetable/amp/"),
        local_site.url("/2026/05/ferry-timetable/?amp=1"),
    )
    await drain(db)
    [doc] = await documents(db)
    assert doc["url"] == normalize_url(permalink) and doc["final_url"] is None
    assert "Read the full version" not in str(doc["body"])  # the regular post's text
    for path in ("/2026/05/ferry-timetable/amp/", "/2026/05/ferry-timetable/?amp=1"):
        row = await frontier_row(db, local_site.url(path))
        assert (row["status"], row["dead_reason"]) == ("dead", "duplicate_content")
        assert row["final_url"] == normalize_url(permalink)
    # A browser following the three links makes three requests; so do we.
    assert len([r for r in local_site.requests if r.path != "/robots.txt"]) == 3


async def test_a_pending_canonical_is_fetched_once_and_takes_the_article_from_its_variant(
    db: Database, local_site: LocalSite
) -> None:
    canonical = local_site.url("/news/ferry-timetable-approved")
    node = zoo.drupal_node(TITLE, canonical)
    zoo.serve_post(local_site, ["/node/123", "/news/ferry-timetable-approved"], node)
    variant = local_site.url("/node/123?sessionid=8f3a2c")
    await submit(db, variant)
    await submit(db, canonical, delay_ms=0)
    # The variant first (it was discovered first), the canonical still pending.
    await db.execute(
        "UPDATE url_frontier SET priority = 10 WHERE url_hash = $1",
        url_hash(normalize_url(variant)),
    )
    await db.execute("UPDATE host_state SET pending_priority = 10")
    await drain(db)
    [doc] = await documents(db)
    assert doc["url"] == normalize_url(canonical)
    assert (await frontier_row(db, canonical))["status"] == "fetched"
    row = await frontier_row(db, variant)
    assert (row["status"], row["final_url"]) == ("dead", normalize_url(canonical))
    assert len(local_site.hits("/news/ferry-timetable-approved")) == 1
    assert (await host_row(db, url_host(normalize_url(canonical))))["pending_count"] == 0


async def test_two_variants_in_one_batch_store_one_document(
    db: Database, local_site: LocalSite
) -> None:
    permalink = local_site.url("/2026/05/ferry-timetable/")
    zoo.serve_post(
        local_site,
        [
            "/2026/05/ferry-timetable?ref=homepage",
            "/2026/05/ferry-timetable?share=facebook",
            "/2026/05/ferry-timetable/",
        ],
        zoo.wordpress_post(TITLE, permalink),
    )
    await submit(
        db,
        local_site.url("/2026/05/ferry-timetable/?ref=homepage"),
        local_site.url("/2026/05/ferry-timetable/?share=facebook"),
    )
    async with fetcher_for(db) as fetcher:
        claims = await fetcher.claim(1) + await fetcher.claim(1, now=after(1))
        assert len(claims) == 2
        await fetcher.process(claims)
    assert len(await documents(db)) == 1  # under one variant until its canonical is fetched
    await drain(db)
    [doc] = await documents(db)
    assert doc["url"] == normalize_url(permalink)
    rows = await db.fetch("SELECT status, dead_reason FROM url_frontier ORDER BY url")
    assert sorted(tuple(r) for r in rows) == sorted(
        [("fetched", None)] + [("dead", "duplicate_content")] * 2
    )


async def test_two_processes_storing_variants_of_one_canonical_store_one_document(
    db: Database, local_site: LocalSite
) -> None:
    permalink = local_site.url("/2026/05/ferry-timetable/")
    paths = ["/2026/05/ferry-timetable?ref=a", "/2026/05/ferry-timetable?ref=b"]
    zoo.serve_post(
        local_site, [*paths, "/2026/05/ferry-timetable/"], zoo.wordpress_post(TITLE, permalink)
    )
    await submit(db, *(local_site.url(p) for p in paths))
    async with fetcher_for(db, worker_id="one") as one, fetcher_for(db, worker_id="two") as two:
        claims_one = await one.claim(1)
        claims_two = await two.claim(1, now=after(1))
        await asyncio.gather(one.process(claims_one), two.process(claims_two))
    assert len(await documents(db)) == 1
    await drain(db)
    [doc] = await documents(db)
    assert doc["url"] == normalize_url(permalink)
    assert (await frontier_row(db, permalink))["status"] == "fetched"


async def test_a_cross_site_canonical_is_only_a_hint(
    db: Database, local_site: LocalSite, partner_site: LocalSite
) -> None:
    original = local_site.url("/2026/05/ferry-timetable/")
    zoo.serve_post(partner_site, ["/syndicated/ferry"], zoo.wordpress_post(TITLE, original))
    await submit(db, partner_site.url("/syndicated/ferry"))
    await drain(db)
    [doc] = await documents(db)
    assert doc["url"] == normalize_url(partner_site.url("/syndicated/ferry"))
    assert (await frontier_row(db, partner_site.url("/syndicated/ferry")))["status"] == "fetched"
    assert local_site.requests == []


async def test_unusable_canonicals_are_ignored(db: Database, local_site: LocalSite) -> None:
    for path, href in [
        ("/broken", "http://[::1"),
        ("/other-scheme", "https://127.0.0.1/broken"),
        ("/script", "javascript:void(0)"),
        ("/empty", ""),
        ("/home", local_site.url("/")),  # a theme printing the site URL on every page
        ("/home-too", local_site.url("/")),
    ]:
        local_site.serve(path, zoo.drupal_node(f"{TITLE} {path}", href))
    paths = ("/broken", "/other-scheme", "/script", "/empty", "/home", "/home-too")
    await submit(db, *(local_site.url(p) for p in paths))
    await drain(db, rounds=10)
    docs = await documents(db)
    assert sorted(str(d["url"]) for d in docs) == sorted(
        normalize_url(local_site.url(p)) for p in paths
    )
    assert local_site.hits("/") == []
    statuses = await db.fetch("SELECT DISTINCT status FROM url_frontier")
    assert [r["status"] for r in statuses] == ["fetched"]


async def test_a_canonical_that_is_dead_is_not_trusted(db: Database, local_site: LocalSite) -> None:
    canonical = local_site.url("/news/retracted-headline")  # 404: the slug was changed
    local_site.serve("/node/7", zoo.drupal_node(TITLE, canonical))
    await submit(db, canonical)
    await drain(db)
    assert (await frontier_row(db, canonical))["dead_reason"] == "not_found"
    await submit(db, local_site.url("/node/7"))
    await drain(db)
    [doc] = await documents(db)
    assert doc["url"] == normalize_url(local_site.url("/node/7"))
    assert (await frontier_row(db, local_site.url("/node/7")))["status"] == "fetched"


async def test_a_variant_whose_write_failed_is_stored_when_retried(
    db: Database, local_site: LocalSite
) -> None:
    from frontier.sinks import RawDocument, SinkUnavailable
    from frontier.sinks.postgres import PostgresSink

    class DownOnce(PostgresSink):
        failed = False

        async def write(self, documents: Sequence[RawDocument]) -> None:
            if not self.failed:
                self.failed = True
                raise SinkUnavailable("connection refused")
            await super().write(documents)

    permalink = local_site.url("/2026/05/ferry-timetable/")
    zoo.serve_post(
        local_site,
        ["/2026/05/ferry-timetable?ref=a", "/2026/05/ferry-timetable/"],
        zoo.wordpress_post(TITLE, permalink),
    )
    await submit(db, local_site.url("/2026/05/ferry-timetable/?ref=a"))
    async with fetcher_for(db, sink=DownOnce(db)) as fetcher:
        await fetcher.run_once()
        assert await documents(db) == []
        assert (await frontier_row(db, permalink + "?ref=a"))["status"] == "pending"
        await fetcher.run_once(now=after(3600))  # the same process, past the sink backoff
        [doc] = await documents(db)
        assert doc["url"] == normalize_url(permalink + "?ref=a")  # its canonical not fetched
        await fetcher.run_once(now=after(3601))
    [doc] = await documents(db)
    assert doc["url"] == normalize_url(permalink)
    assert (await frontier_row(db, permalink))["status"] == "fetched"


async def test_a_page_cannot_store_its_text_under_an_unpublished_url(
    db: Database, local_site: LocalSite
) -> None:
    """Issue 35: a page naming another URL of its site as canonical (an unpublished one:
    it answers 404) never writes under it, nor makes it `fetched` unrequested."""
    target = local_site.url("/2026/06/embargoed-results")
    local_site.serve("/comments/42", zoo.drupal_node("Rumours", target))
    await submit(db, local_site.url("/comments/42"))
    await drain(db)
    [doc] = await documents(db)
    assert doc["url"] == normalize_url(local_site.url("/comments/42"))
    row = await frontier_row(db, target)
    assert (row["status"], row["dead_reason"]) == ("dead", "not_found")
    assert len(local_site.hits("/2026/06/embargoed-results")) == 1  # fetched to verify
    assert (await frontier_row(db, local_site.url("/comments/42")))["status"] == "fetched"


async def test_a_claimed_canonical_keeps_its_own_text(db: Database, local_site: LocalSite) -> None:
    """The canonical a page names is stored with its own text once fetched: the page
    naming it cannot put words under it."""
    target = local_site.url("/2026/06/results")
    local_site.serve("/comments/42", zoo.drupal_node("Rumours", target))
    local_site.serve("/2026/06/results", zoo.drupal_node(TITLE, target))
    await submit(db, local_site.url("/comments/42"))
    await drain(db)
    [doc] = await documents(db)
    assert doc["url"] == normalize_url(target) and TITLE in str(doc["title"])
    row = await frontier_row(db, local_site.url("/comments/42"))
    assert (row["status"], row["final_url"]) == ("dead", normalize_url(target))


def dated_article(title: str, published: str) -> str:
    """An article with its publication date and no canonical link (a copy of it is
    byte for byte the same text)."""
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
        f"<meta property='article:published_time' content='{published}'></head>"
        f"<body><article><h1>{title}</h1>{zoo.body_text(TITLE)}</article></body></html>"
    )


async def test_a_copy_on_another_site_fetched_first_does_not_erase_the_original(
    db: Database, local_site: LocalSite, partner_site: LocalSite
) -> None:
    """Issue 35: the copy, fetched first, holds the text until the original (published
    earlier) is fetched; then the original holds the document and the copy is linked to
    it. Both URLs keep their record."""
    original = local_site.url("/2026/05/ferry-timetable")
    copy = partner_site.url("/scraped/ferry")
    local_site.serve("/2026/05/ferry-timetable", dated_article(TITLE, "2026-05-04T09:00:00Z"))
    partner_site.serve("/scraped/ferry", dated_article(TITLE, "2026-05-06T12:00:00Z"))
    await submit(db, copy)
    await drain(db)
    [doc] = await documents(db)
    assert doc["url"] == normalize_url(copy)
    await submit(db, original)
    await drain(db)
    [doc] = await documents(db)
    assert doc["url"] == normalize_url(original)
    kept = await frontier_row(db, original)
    assert (kept["status"], kept["dead_reason"]) == ("fetched", None)
    linked = await frontier_row(db, copy)
    assert (linked["status"], linked["dead_reason"]) == ("dead", "duplicate_content")
    assert linked["final_url"] == normalize_url(original)
    # A copy fetched after the original is linked to it at once.
    partner_site.serve("/scraped/ferry-again", dated_article(TITLE, "2026-05-07T12:00:00Z"))
    await submit(db, partner_site.url("/scraped/ferry-again"))
    await drain(db)
    assert [d["url"] for d in await documents(db)] == [normalize_url(original)]
    again = await frontier_row(db, partner_site.url("/scraped/ferry-again"))
    assert (again["dead_reason"], again["final_url"]) == (
        "duplicate_content",
        normalize_url(original),
    )


async def test_two_processes_storing_the_same_text_at_once_store_one_document(
    db: Database, local_site: LocalSite, partner_site: LocalSite
) -> None:
    """Issue 31: two fetch processes, each with its own pipeline, store the same body at
    the same moment (both fetched before either stores): one document."""
    page = dated_article(TITLE, "2026-05-04T09:00:00Z")
    local_site.serve("/a", page)
    partner_site.serve("/b", page)
    await submit(db, local_site.url("/a"), partner_site.url("/b"))
    async with fetcher_for(db, worker_id="one") as one, fetcher_for(db, worker_id="two") as two:
        claims_one = await one.claim(1)
        claims_two = await two.claim(1)
        assert len(claims_one) == len(claims_two) == 1
        pages_one, pages_two = await asyncio.gather(
            one.pipeline.fetch(claims_one), two.pipeline.fetch(claims_two)
        )
        await asyncio.gather(one.pipeline.store(pages_one), two.pipeline.store(pages_two))
    assert len(await documents(db)) == 1
    kinds = sorted(str(p.outcome.kind) for p in pages_one + pages_two if p.outcome)
    assert kinds == ["duplicate_content", "fetched"]
