"""The CMS zoo, metadata: what WordPress/Yoast and Ghost pages declare reaches the stored
document end to end (local site, queue, safe client, extraction, PostgreSQL sink), with
the declared time of day; a date far in the future gives way to the feed's. Each article
is stored once, with its text, at one request, and nothing ends `dead`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from frontier.db import Database
from tests.fetch_harness import fetch_stored
from tests.local_site import LocalSite
from tests.zoo import metadata as zoo


async def fetch_one(
    db: Database, site: LocalSite, path: str, meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    doc = await fetch_stored(db, site, path, meta)
    assert "publish every contract" in doc["body"]
    return doc


async def test_wordpress_yoast_graph_is_stored_with_its_declared_time(
    db: Database, local_site: LocalSite
) -> None:
    zoo.wordpress_yoast(local_site, "/2026/03/04/council-contracts/")
    doc = await fetch_one(db, local_site, "/2026/03/04/council-contracts/")
    assert doc["published_at"] == datetime(2026, 3, 4, 8, 0, tzinfo=UTC)
    assert (doc["title"], doc["author"], doc["language"]) == (
        "Council opens its contracts",
        "Jo Bloggs",
        "en-GB",
    )
    assert doc["image_url"] == local_site.url("/wp-content/uploads/2026/03/bridge.jpg")
    assert doc["extractor"] == "generic"


async def test_ghost_json_ld_with_a_trailing_comma_is_still_read(
    db: Database, local_site: LocalSite
) -> None:
    zoo.ghost_with_trailing_comma(local_site, "/bridge-repairs/")
    doc = await fetch_one(db, local_site, "/bridge-repairs/")
    assert doc["published_at"] == datetime(2026, 3, 5, 17, 45, tzinfo=UTC)
    assert (doc["author"], doc["image_url"]) == ("Ana Li", "https://cdn.example/bridge.png")


async def test_a_date_far_ahead_gives_way_to_the_feeds(db: Database, local_site: LocalSite) -> None:
    zoo.dated_far_ahead(local_site, "/festival/")
    feed = {"title": "Festival", "published": "Mon, 02 Mar 2026 09:15:00 GMT"}
    doc = await fetch_one(db, local_site, "/festival/", meta=feed)
    assert doc["published_at"] == datetime(2026, 3, 2, 9, 15, tzinfo=UTC)
    assert (doc["title"], doc["author"]) == ("Festival programme", "Events desk")
