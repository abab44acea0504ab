"""The zoo, structured data (issue 29 item 3): a client-rendered article whose text is
only in its JSON-LD `articleBody` is stored whole, and a paywalled page (Google's
`isAccessibleForFree` markup, its gated part withheld) is stored as its teaser with the
`paywalled` flag, in PostgreSQL and in Elasticsearch (the stand-in, which checks each
document against the index mapping). tests/zoo/structured.py cites each behaviour."""

from __future__ import annotations

from frontier.db import Database
from frontier.sinks.elasticsearch import ElasticsearchSink
from frontier.urls import normalize_url, url_hash
from tests.es_standin import ElasticsearchStandIn
from tests.fetch_harness import after, fetch_stored, fetcher_for, frontier_row, submit
from tests.local_site import LocalSite
from tests.zoo import structured as zoo

TITLE = "Night trains return in March"


async def test_a_client_rendered_article_is_stored_with_its_json_ld_body(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/travel/night-trains", zoo.nextjs_article(TITLE))
    doc = await fetch_stored(db, local_site, "/travel/night-trains")
    body = str(doc["body"])
    for paragraph in zoo.PARAGRAPHS:
        assert paragraph in body
    assert doc["word_count"] > 250  # not the 31-word description
    assert doc["title"] == TITLE and doc["author"] == "Mara Lind"
    assert doc["paywalled"] is False


async def test_a_paywalled_teaser_is_stored_with_the_flag(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/travel/night-trains", zoo.paywalled_article(TITLE))
    local_site.serve("/subscriber/night-trains", zoo.paywalled_article_served_whole(TITLE))
    doc = await fetch_stored(db, local_site, "/travel/night-trains")
    assert doc["paywalled"] is True
    assert zoo.PARAGRAPHS[0] in str(doc["body"]) and zoo.PARAGRAPHS[5] not in str(doc["body"])
    # The same page served whole (the gated part in it) is a whole article.
    await submit(db, local_site.url("/subscriber/night-trains"))
    async with fetcher_for(db) as fetcher:
        await fetcher.run_once()
    row = await frontier_row(db, local_site.url("/subscriber/night-trains"))
    whole = await db.fetchrow(
        "SELECT paywalled, body FROM raw_content WHERE url_hash = $1", row["url_hash"]
    )
    assert whole is not None and whole["paywalled"] is False
    assert zoo.PARAGRAPHS[-1] in whole["body"]


async def test_the_elasticsearch_sink_stores_the_flag_its_mapping_declares(
    db: Database, local_site: LocalSite, standin: ElasticsearchStandIn
) -> None:
    local_site.serve("/travel/night-trains", zoo.paywalled_article(TITLE))
    local_site.serve("/travel/client-rendered", zoo.nextjs_article(TITLE))
    sink = ElasticsearchSink(standin.url, flush_docs=1)
    await sink.ensure_index()
    await submit(
        db, local_site.url("/travel/night-trains"), local_site.url("/travel/client-rendered")
    )
    try:
        async with fetcher_for(db, sink=sink) as fetcher:
            for _ in range(4):  # one URL per host per batch
                if (await fetcher.run_once(now=after(1))).claimed == 0:
                    break
    finally:
        await sink.close()
    assert standin.rejected_requests == []
    stored = standin.indices["raw_content"]
    paywalled = stored[url_hash(normalize_url(local_site.url("/travel/night-trains")))]
    rendered = stored[url_hash(normalize_url(local_site.url("/travel/client-rendered")))]
    assert paywalled["paywalled"] is True and rendered["paywalled"] is False
    assert zoo.PARAGRAPHS[-1] in rendered["body"]
