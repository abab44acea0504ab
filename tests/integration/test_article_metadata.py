"""Issue 29 items 5 and 6, end to end: a page served on 127.0.0.1, fetched by the fetcher,
is stored with its detected language, modified date, section, tags, lead image, paragraphs
and Markdown in PostgreSQL (`raw_content`) and in Elasticsearch (the stand-in checks every
document against the index mapping, and adds the new fields to an index made before them
as the sink does); a source keeping only English ends a German corpus page with its
reason and no document, and stores an English one."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from frontier.db import Database
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy
from frontier.sinks.elasticsearch import ElasticsearchSink
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from frontier.states import Origin
from frontier.urls import normalize_url, url_hash
from tests.corpus_path import CORPUS
from tests.es_standin import ElasticsearchStandIn
from tests.fetch_harness import after, fetch_stored, fetcher_for, frontier_row
from tests.local_site import LocalSite

TITLE = "Ferry terminal to close for repairs"
PARAGRAPHS = [
    "The harbour authority confirmed on Tuesday that the old ferry terminal will close for "
    "repairs at the end of the month, after inspectors found cracks in two of its piers.",
    "Passengers will board from a temporary pontoon on the north quay, which the authority "
    "says can take the same number of sailings a day while the work goes on.",
    "Local businesses near the terminal said they had not been told how long the closure "
    "would last, and several cafe owners asked the council for help with lost trade.",
    "The repairs are expected to cost about four million pounds, paid from the port's "
    "maintenance fund, and the contractor has promised to finish before the summer.",
]
ITEMS = ["Sailings move to the north quay pontoon", "Parking stays open at the terminal"]
GERMAN = CORPUS / "articles" / "trafilatura-eval" / "html" / "erfolg-magazin.de.konfliktkultur.html"
ENGLISH = CORPUS / "articles" / "trafilatura-eval" / "html" / "docs.docker.com.install.html"


def article() -> str:
    """A news page declaring all the metadata: JSON-LD NewsArticle (dateModified,
    articleSection, keywords, an ImageObject), og:image, and a body with a heading and a
    list."""
    data = {
        "@context": "https://schema.org",
        "@type": "NewsArticle",
        "headline": TITLE,
        "datePublished": "2026-03-02T08:00:00Z",
        "dateModified": "2026-03-03T09:30:00Z",
        "articleSection": "Local news",
        "keywords": "harbour, ferries, repairs",
        "image": {"@type": "ImageObject", "url": "https://cdn.example/lead.jpg"},
        "author": {"@type": "Person", "name": "Ada Byrne"},
    }
    body = "".join(f"<p>{p}</p>" for p in PARAGRAPHS[:2])
    body += "<h2>What changes for passengers</h2><ul>"
    body += "".join(f"<li>{item}</li>" for item in ITEMS) + "</ul>"
    body += "".join(f"<p>{p}</p>" for p in PARAGRAPHS[2:])
    return (
        f'<!doctype html><html lang="en-GB"><head><title>{TITLE}</title>'
        '<meta property="og:image" content="https://cdn.example/og.jpg">'
        f'<script type="application/ld+json">{json.dumps(data)}</script></head>'
        '<body><nav><a href="/">Home</a> <a href="/news">News</a></nav>'
        f"<article><h1>{TITLE}</h1>{body}</article>"
        "<footer>Copyright the Harbour Gazette</footer></body></html>"
    )


def check_document(doc: dict[str, object]) -> None:
    assert doc["language"] == "en-GB" and doc["detected_language"] == "en"
    assert isinstance(doc["language_confidence"], float) and doc["language_confidence"] > 0.8
    assert doc["section"] == "Local news"
    assert list(doc["tags"]) == ["harbour", "ferries", "repairs"]  # type: ignore[call-overload]
    assert doc["image_url"] == "https://cdn.example/lead.jpg"  # the article's, before og:image
    paragraphs = list(doc["paragraphs"])  # type: ignore[call-overload]
    # The body starts after the headline (the title holds it), then one paragraph a line.
    assert (
        paragraphs[0] == PARAGRAPHS[0] and PARAGRAPHS[3] in paragraphs and TITLE not in paragraphs
    )
    assert f"- {ITEMS[0]}" in paragraphs
    markdown = str(doc["markdown"])
    assert "\n## What changes for passengers\n" in markdown
    assert f"\n- {ITEMS[0]}\n- {ITEMS[1]}\n" in markdown
    assert doc["paywalled"] is False


async def test_a_page_is_stored_with_its_language_and_metadata_in_postgres(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/news/ferry-terminal", article())
    doc = await fetch_stored(db, local_site, "/news/ferry-terminal")
    check_document(doc)
    assert doc["modified_at"] == datetime(2026, 3, 3, 9, 30, tzinfo=UTC)


async def test_the_elasticsearch_sink_stores_them_in_an_index_made_before_them(
    db: Database, local_site: LocalSite, standin: ElasticsearchStandIn
) -> None:
    new = ("detected_language", "language_confidence", "modified_at", "section", "tags")
    standin.create_old_index("raw_content", without=(*new, "paragraphs", "markdown"))
    local_site.serve("/news/ferry-terminal", article())
    sink = ElasticsearchSink(standin.url, flush_docs=1)
    await sink.ensure_index()  # adds the fields to the old index's mapping
    url = local_site.url("/news/ferry-terminal")
    queue = QueueRepository(db, QueuePolicy(default_delay_ms=0))
    manual = await SourceRepository(db).get("manual")
    await queue.submit([Candidate(url, manual.ref, Origin.MANUAL)])
    try:
        async with fetcher_for(db, sink=sink) as fetcher:
            await fetcher.run_once()
    finally:
        await sink.close()
    assert standin.rejected_requests == []
    doc = standin.indices["raw_content"][url_hash(normalize_url(url))]
    check_document(doc)
    assert doc["modified_at"] == "2026-03-03T09:30:00+00:00"


async def test_a_source_keeping_english_ends_a_german_page_with_its_reason(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/de/konfliktkultur", GERMAN.read_bytes())
    local_site.serve("/en/install", ENGLISH.read_bytes())
    source = await SourceRepository(db).create(
        parse_config({"name": "English only", "languages": ["en"]})
    )
    german, english = local_site.url("/de/konfliktkultur"), local_site.url("/en/install")
    queue = QueueRepository(db, QueuePolicy(default_delay_ms=0))
    await queue.submit([Candidate(u, source.ref, Origin.MANUAL) for u in (german, english)])
    async with fetcher_for(db) as fetcher:
        for _ in range(3):  # one URL per host per batch
            if (await fetcher.run_once(now=after(1))).claimed == 0:
                break

    row = await frontier_row(db, german)
    assert (row["status"], row["dead_reason"]) == ("dead", "unsupported_content")
    assert row["last_error"].startswith("language: the text is in de (detected, confidence 0.99")
    assert row["last_error"].endswith("the source keeps en")
    assert len(local_site.hits("/de/konfliktkultur")) == 1  # fetched once, then ended
    stored = await db.fetch("SELECT url_hash, detected_language FROM raw_content")
    assert [(r["url_hash"], r["detected_language"]) for r in stored] == [
        (url_hash(normalize_url(english)), "en")
    ]
    assert (await frontier_row(db, english))["status"] == "fetched"
