"""The zoo, identity (issue 29 item 2): an article a server spells several ways is one URL
in the frontier, requested once and stored once under its canonical identity: Drupal's
canonical in the HTTP `Link` header, a servlet's `;jsessionid=` URL rewriting, PHP's
`session.use_trans_sid` (tests/zoo/identity.py cites each). Real PostgreSQL, real local
servers."""

from __future__ import annotations

import pytest

from frontier.db import Database
from frontier.urls import normalize_url, url_hash
from tests.fetch_harness import after, fetcher_for, frontier_row, submit
from tests.local_site import LocalSite
from tests.zoo import duplicates
from tests.zoo import identity as zoo

TITLE = "Ferry timetable approved"


async def documents(db: Database) -> list[dict[str, object]]:
    return [dict(r) for r in await db.fetch("SELECT * FROM raw_content ORDER BY url")]


async def frontier_urls(db: Database) -> list[str]:
    return [r["url"] for r in await db.fetch("SELECT url FROM url_frontier ORDER BY url")]


async def drain(db: Database, rounds: int = 6) -> None:
    """Fetch until nothing is due (each round a batch; one URL per host per batch)."""
    async with fetcher_for(db) as fetcher:
        for _ in range(rounds):
            if (await fetcher.run_once(now=after(1))).claimed == 0:
                return


def page_requests(site: LocalSite) -> list[str]:
    return [r.path for r in site.requests if r.path != "/robots.txt"]


@pytest.mark.parametrize("version", [7, 10])
async def test_a_canonical_named_only_in_drupals_link_header_keeps_the_article(
    db: Database, local_site: LocalSite, version: int
) -> None:
    alias = "/news/ferry-timetable-approved"
    page = zoo.drupal_node_without_head_canonical(TITLE)
    zoo.serve_drupal_node(local_site, "/node/123", alias, page, version=version)
    await submit(db, local_site.url("/node/123"))
    await drain(db)
    canonical = normalize_url(local_site.url(alias))
    [doc] = await documents(db)
    assert (doc["url"], doc["url_hash"], doc["final_url"]) == (canonical, url_hash(canonical), None)
    assert duplicates.STORY in str(doc["body"])
    node = await frontier_row(db, local_site.url("/node/123"))
    assert (node["status"], node["dead_reason"]) == ("dead", "duplicate_content")
    assert node["final_url"] == canonical
    assert (await frontier_row(db, local_site.url(alias)))["status"] == "fetched"
    # The node and its alias, each once: what a browser following both links makes.
    assert sorted(page_requests(local_site)) == sorted(["/node/123", alias])


async def test_servlet_session_rewriting_is_one_url_requested_once(
    db: Database, local_site: LocalSite
) -> None:
    path = "/news/story.jsp"
    zoo.serve_servlet_article(local_site, path, duplicates.wordpress_post(TITLE, ""))
    # Three visits to the listing, three spellings of the link (the first without a
    # session, as a feed lists it), then the feed again.
    spellings = [path, *zoo.jsessionid_spellings(path, 2)]
    await submit(db, *(local_site.url(s) for s in spellings))
    identity = normalize_url(local_site.url(path))
    assert await frontier_urls(db) == [identity]
    await drain(db)
    await submit(db, local_site.url(zoo.jsessionid_spellings(path, 1)[0]))
    await drain(db)
    [doc] = await documents(db)
    assert doc["url"] == identity and duplicates.STORY in str(doc["body"])
    row = await frontier_row(db, local_site.url(path))
    assert (row["status"], row["dead_reason"]) == ("fetched", None), row["last_error"]
    # The redirect to the rewritten URL was followed inline (the same identity), and the
    # next visit asks for the spelling the server gave.
    assert ";jsessionid=" in row["fetch_url"]
    assert await frontier_urls(db) == [identity]
    requested = page_requests(local_site)
    assert requested[0] == path and len(requested) == 2
    assert requested[1].startswith(path + ";jsessionid=")


async def test_php_trans_sid_links_are_one_url_requested_once(
    db: Database, local_site: LocalSite
) -> None:
    zoo.serve_trans_sid_article(local_site, "/article.php", duplicates.drupal_node(TITLE, ""))
    links = zoo.trans_sid_links("/article.php", "id=7", 3)
    await submit(db, *(local_site.url(link) for link in links))
    identity = normalize_url(local_site.url("/article.php?id=7"))
    assert await frontier_urls(db) == [identity]
    await drain(db)
    [doc] = await documents(db)
    assert doc["url"] == identity and duplicates.STORY in str(doc["body"])
    row = await frontier_row(db, identity)
    assert row["status"] == "fetched"
    # The server's spelling is what was requested: PHP finds its session there.
    assert row["fetch_url"] in (None, local_site.url(links[0]))
    assert [r.path for r in local_site.hits(links[0])] == [links[0]]
    assert len(page_requests(local_site)) == 1
