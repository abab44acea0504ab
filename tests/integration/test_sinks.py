"""The content sinks: PostgreSQL raw_content, and Elasticsearch (a real one when
FRONTIER_TEST_ELASTICSEARCH_URL is set, else the strict in-repo stand-in)."""

from __future__ import annotations

import asyncio
import json
import os
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest
from packaging.requirements import Requirement

from frontier.db import Database
from frontier.sinks import DocumentRejected, RawDocument, SinkUnavailable
from frontier.sinks.elasticsearch import ElasticsearchSink, load_index_definition
from frontier.sinks.postgres import PostgresSink
from tests.es_standin import SERVER_MAJOR, SERVER_VERSION, ElasticsearchStandIn
from tests.fetch_harness import after, article, fetcher_for, frontier_row, submit
from tests.local_site import LocalSite

REAL_ES = os.environ.get("FRONTIER_TEST_ELASTICSEARCH_URL")
REPO = Path(__file__).resolve().parents[2]
MEDIA = "application/vnd.elasticsearch+json"


def doc(n: int, **changes: object) -> RawDocument:
    values: dict[str, object] = dict(
        url_hash=f"{n:064x}",
        url=f"http://a.test/{n}",
        final_url=None,
        source_id=None,
        source_name="manual",
        host="a.test",
        origin="manual",
        title=f"T{n}",
        body="b" * n,
        summary=None,
        author=None,
        published_at=datetime(2026, 1, 1, tzinfo=UTC),
        image_url=None,
        language="en",
        content_hash=f"{n:064x}",
        word_count=1,
        extractor="generic",
        http_status=200,
        fetched_at=datetime(2026, 1, 2, tzinfo=UTC),
    )
    values.update(changes)
    return RawDocument(**values)  # type: ignore[arg-type]


async def test_postgres_sink_upserts_idempotently(db: Database) -> None:
    sink = PostgresSink(db)
    await sink.write([doc(1), doc(2)])
    await sink.write([doc(1, title="replaced")])
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 2
    stored = await sink.get(f"{1:064x}")
    assert stored is not None and stored["title"] == "replaced"


async def test_postgres_sink_deletes_documents_and_their_vectors(db: Database) -> None:
    sink = PostgresSink(db)
    await sink.write([doc(1), doc(2)])
    await sink.delete([f"{1:064x}", f"{9:064x}"])  # one absent: no error
    assert [r["url_hash"] for r in await db.fetch("SELECT url_hash FROM raw_content")] == [
        f"{2:064x}"
    ]
    assert await db.fetchval("SELECT count(*) FROM raw_content_search") == 1


async def test_es_sink_deletes_documents_after_the_writes_waiting(
    standin: ElasticsearchStandIn,
) -> None:
    sink = ElasticsearchSink(standin.url, index="raw_content_test", flush_interval_s=60)
    try:
        await sink.ensure_index()
        writing = asyncio.ensure_future(sink.write([doc(1), doc(2)]))
        await asyncio.sleep(0)  # waiting for its flush timer
        await sink.delete([f"{1:064x}", f"{9:064x}"])  # flushes first; one absent
        await writing
    finally:
        await sink.close()
    assert sorted(standin.indices["raw_content_test"]) == [f"{2:064x}"]


async def test_es_sink_creates_the_index_and_bulk_indexes(standin: ElasticsearchStandIn) -> None:
    url = REAL_ES or standin.url
    sink = ElasticsearchSink(url, index="raw_content_test", flush_docs=3, flush_interval_s=0.05)
    try:
        await sink.ensure_index()
        await sink.ensure_index()  # exists: left alone
        await sink.write([doc(1), doc(2), doc(3)])  # flushed by size
        await sink.write([doc(1, title="again")])  # flushed by time; same id replaces
    finally:
        await sink.close()
    if REAL_ES:
        return
    assert standin.rejected_requests == []
    stored = standin.indices["raw_content_test"]
    assert sorted(stored) == [f"{n:064x}" for n in (1, 2, 3)]
    assert stored[f"{1:064x}"]["title"] == "again" and standin.bulk_requests == 2


async def test_es_sink_adds_the_paywalled_field_to_an_index_an_older_release_made(
    standin: ElasticsearchStandIn,
) -> None:
    """An index made before `paywalled` was mapped (strict mapping): ensure_index adds the
    field, so a paywalled document is stored instead of refused."""
    standin.create_old_index("raw_content", without=("paywalled",))
    sink = ElasticsearchSink(standin.url, flush_docs=1)
    try:
        await sink.ensure_index()
        await sink.write([doc(7, paywalled=True)])
    finally:
        await sink.close()
    assert standin.rejected_requests == []
    assert standin.indices["raw_content"][f"{7:064x}"]["paywalled"] is True


async def test_the_postgres_sink_stores_the_paywalled_flag(db: Database) -> None:
    await PostgresSink(db).write([doc(8, paywalled=True), doc(9)])
    rows = await db.fetch("SELECT url_hash, paywalled FROM raw_content ORDER BY url_hash")
    assert [(r["url_hash"], r["paywalled"]) for r in rows] == [
        (f"{8:064x}", True),
        (f"{9:064x}", False),
    ]


WARC_FIELDS = ("warc_file", "warc_offset", "warc_length", "warc_record_id")


async def test_es_sink_adds_the_archive_pointer_to_an_index_made_before_it(
    standin: ElasticsearchStandIn,
) -> None:
    """An index created by the definition before the WARC archive (issue 30) lacks the
    pointer's fields; its mapping is strict, so the documents would be refused: the sink
    adds them when it starts."""
    standin.create_old_index("raw_content", without=WARC_FIELDS)
    sink = ElasticsearchSink(standin.url, flush_docs=1)
    pointed = doc(
        7,
        warc_file="w-20261127-00001.warc.gz",
        warc_offset=1234,
        warc_length=5678,
        warc_record_id="<urn:uuid:6541710c-d94c-4c1e-b07e-4604c656f501>",
    )
    try:
        await sink.ensure_index()
        await sink.write([pointed])
    finally:
        await sink.close()
    assert standin.rejected_requests == []
    stored = standin.indices["raw_content"][f"{7:064x}"]
    assert (stored["warc_file"], stored["warc_offset"]) == ("w-20261127-00001.warc.gz", 1234)


NEAR_DUPLICATE_FIELDS = ("minhash", "near_duplicate_of")


async def test_es_sink_adds_the_near_duplicate_fields_to_an_index_made_before_them(
    standin: ElasticsearchStandIn,
) -> None:
    """An index made before near-duplicates (issue 29 item 4) gains `minhash` and
    `near_duplicate_of` when the sink starts; both sinks store them."""
    standin.create_old_index("raw_content", without=NEAR_DUPLICATE_FIELDS)
    sink = ElasticsearchSink(standin.url, flush_docs=1)
    linked = doc(7, minhash="ab" * 256, near_duplicate_of=f"{6:064x}")
    try:
        await sink.ensure_index()
        await sink.write([linked])
    finally:
        await sink.close()
    assert standin.rejected_requests == []
    stored = standin.indices["raw_content"][f"{7:064x}"]
    assert (stored["minhash"], stored["near_duplicate_of"]) == ("ab" * 256, f"{6:064x}")


async def test_the_postgres_sink_stores_the_near_duplicate_fields(db: Database) -> None:
    await PostgresSink(db).write([doc(8, minhash="cd" * 256, near_duplicate_of=f"{9:064x}")])
    row = await db.fetchrow("SELECT minhash, near_duplicate_of FROM raw_content")
    assert row is not None
    assert (row["minhash"], row["near_duplicate_of"]) == ("cd" * 256, f"{9:064x}")


async def test_es_sink_reports_refused_documents(standin: ElasticsearchStandIn) -> None:
    sink = ElasticsearchSink(standin.url, flush_docs=1)
    try:
        await sink.ensure_index()
        with pytest.raises(DocumentRejected) as caught:
            await sink.write([doc(5, word_count="many")])
        assert caught.value.url_hashes == (f"{5:064x}",)
    finally:
        await sink.close()


async def test_es_down_puts_claimed_urls_back(
    db: Database, local_site: LocalSite, standin: ElasticsearchStandIn
) -> None:
    sink = ElasticsearchSink(standin.url, flush_docs=1, attempts=2, backoff_s=0.01)
    await sink.ensure_index()
    standin.down = True
    with pytest.raises(SinkUnavailable):
        await sink.write([doc(1)])
    local_site.serve("/a", article("A"))
    await submit(db, local_site.url("/a"))
    try:
        async with fetcher_for(db, sink=sink) as fetcher:
            await fetcher.run_once()
            row = await frontier_row(db, local_site.url("/a"))
            assert (row["status"], row["retry_count"]) == ("pending", 0)
            standin.down = False
            assert (await fetcher.run_once(now=after(3600))).claimed == 1  # past the wait
    finally:
        await sink.close()
    assert (await frontier_row(db, local_site.url("/a")))["status"] == "fetched"
    assert list(standin.indices["raw_content"]) == [row["url_hash"]]


def test_the_client_major_matches_the_server_in_compose() -> None:
    """The installed client, and every client pyproject.toml allows, speak the major of the
    Elasticsearch that deploy/compose.yaml runs (a newer client's `compatible-with` header
    is refused by that server)."""
    import elasticsearch

    assert elasticsearch.__versionstr__.split(".")[0] == str(SERVER_MAJOR)
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    (client,) = [Requirement(r) for r in project["dependencies"] if r.startswith("elasticsearch")]
    assert client.specifier.contains(f"{SERVER_MAJOR}.99")
    assert not client.specifier.contains(f"{SERVER_MAJOR + 1}.0")


@pytest.mark.parametrize(
    ("accept", "content_type", "refused"),
    [
        (f"{MEDIA}; compatible-with=9", f"{MEDIA}; compatible-with=9", "Accept version must"),
        ("application/json", f"{MEDIA}; compatible-with=9", "Content-Type version must"),
        (f"{MEDIA}; compatible-with=8", "application/json", "required on both"),
        (f"{MEDIA}; compatible-with=8", f"{MEDIA}; compatible-with=8", None),
        ("application/json", "application/json", None),
    ],
)
async def test_the_standin_refuses_another_majors_media_type(
    standin: ElasticsearchStandIn, accept: str, content_type: str, refused: str | None
) -> None:
    """As an 8.x server answers a 9.x client: 400 media_type_header_exception, nothing done."""
    definition = load_index_definition()
    headers = {"Accept": accept, "Content-Type": content_type}
    async with aiohttp.ClientSession() as session:
        async with session.get(standin.url, headers={"Accept": accept}) as answer:
            info = await answer.json()
        async with session.put(
            f"{standin.url}/raw_content", headers=headers, data=json.dumps(definition)
        ) as answer:
            status, body = answer.status, await answer.json()
    if refused is None:
        assert (status, list(standin.indices)) == (200, ["raw_content"])
        assert info["version"]["number"] == SERVER_VERSION
        return
    assert status == 400 and standin.indices == {}
    assert body["error"]["type"] == "media_type_header_exception"
    assert body["error"]["root_cause"][0]["type"] == "media_type_header_exception"
    assert refused in body["error"]["caused_by"]["reason"]
