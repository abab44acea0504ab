"""Reading stored articles back (frontier.documents): the PostgreSQL reader and the
Elasticsearch reader (over the stand-in) page the same documents the same way, with the
same filters; `GET /api/v1/documents` and `frontier documents` on top."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from frontier.api.app import create_app
from frontier.db import Database
from frontier.documents import Cursor, DocumentFilter, DocumentReader
from frontier.settings import Settings
from frontier.sinks import RawDocument
from frontier.sinks.elasticsearch import ElasticsearchDocuments, ElasticsearchSink
from frontier.sinks.postgres import PostgresDocuments, PostgresSink
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from frontier.urls import normalize_url, url_hash
from tests.es_standin import ElasticsearchStandIn
from tests.processes import frontier_env, frontier_output

BASE = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
TEXTS = [
    ("Harbour bridge reopens", "The harbour bridge reopened to traffic on Monday morning."),
    ("Council budget vote", "The council voted on the budget; the harbour plan was delayed."),
    ("Rain all week", "Forecasters expect rain until Friday across the region."),
    ("Ferry timetable", "New ferry timetable from the harbour starts in December."),
    ("Library hours", "The central library opens late on Thursdays."),
    ("School results", "Exam results improved in every school of the district."),
    ("Market day", "The Saturday market moves to the harbour square."),
]


def document(i: int, source_id: Any, source_name: str) -> RawDocument:
    host = "news.example" if i % 2 == 0 else "blog.example"
    url = normalize_url(f"https://{host}/story/{i}")
    title, body = TEXTS[i]
    # Two documents share one fetched_at: url_hash breaks the tie.
    fetched = BASE + timedelta(hours=min(i, 5))
    return RawDocument(
        url_hash=url_hash(url), url=url, final_url=None, source_id=source_id,
        source_name=source_name, host=host, origin="feed", title=title, body=body,
        summary=None, author="Desk", published_at=fetched - timedelta(minutes=30),
        image_url=None, language="en", content_hash=None, word_count=len(body.split()),
        extractor="generic", http_status=200, fetched_at=fetched,
    )  # fmt: skip


async def seeded_documents(db: Database) -> tuple[list[RawDocument], Any, Any]:
    sources = SourceRepository(db)
    city = await sources.create(
        parse_config({"name": "city", "feed_url": "https://news.example/rss"})
    )
    blog = await sources.create(
        parse_config({"name": "blog", "feed_url": "https://blog.example/rss"})
    )
    docs = [
        document(i, city.id if i < 4 else blog.id, "city" if i < 4 else "blog") for i in range(7)
    ]
    return docs, city.id, blog.id


@asynccontextmanager
async def on_standin(docs: list[RawDocument]) -> AsyncIterator[DocumentReader]:
    """`docs` in the Elasticsearch stand-in, and its reader; no request refused."""
    standin = await ElasticsearchStandIn().start()
    sink = ElasticsearchSink(standin.url, flush_interval_s=0)
    reader = ElasticsearchDocuments(standin.url)
    try:
        await sink.ensure_index()
        await sink.write(docs)
        yield reader
        assert standin.rejected_requests == []
    finally:
        await sink.close()
        await reader.close()
        await standin.stop()


@pytest.fixture(params=["postgres", "elasticsearch"])
async def stored(
    request: pytest.FixtureRequest, db: Database
) -> AsyncIterator[tuple[DocumentReader, list[RawDocument], Any, Any]]:
    docs, city, blog = await seeded_documents(db)
    if request.param == "postgres":
        await PostgresSink(db).write(docs)
        yield PostgresDocuments(db), docs, city, blog
        return
    async with on_standin(docs) as reader:
        yield reader, docs, city, blog


def newest_first(docs: list[RawDocument]) -> list[str]:
    return [
        d.url_hash for d in sorted(docs, key=lambda d: (d.fetched_at, d.url_hash), reverse=True)
    ]


async def walk(reader: DocumentReader, where: DocumentFilter, limit: int) -> list[str]:
    seen: list[str] = []
    after = None
    for _ in range(20):
        page = await reader.page(where, after=after, limit=limit)
        assert len(page.items) <= limit
        seen += [item["url_hash"] for item in page.items]
        if page.next is None:
            return seen
        after = Cursor.decode(page.next)
    raise AssertionError("paging did not end")


async def test_pages_walk_every_document_once_newest_first(stored: Any) -> None:
    reader, docs, _city, _blog = stored
    assert await walk(reader, DocumentFilter(), 3) == newest_first(docs)
    assert await walk(reader, DocumentFilter(), 7) == newest_first(docs)
    first = await reader.page(DocumentFilter(), after=None, limit=2)
    assert "body" not in first.items[0] and first.items[0]["title"]


async def test_filters_by_source_host_since_and_search(stored: Any) -> None:
    reader, docs, city, blog = stored
    assert await walk(reader, DocumentFilter(source_id=city), 2) == newest_first(docs[:4])
    assert await walk(reader, DocumentFilter(host="blog.example"), 2) == newest_first(
        [d for d in docs if d.host == "blog.example"]
    )
    since = BASE + timedelta(hours=4)
    assert await walk(reader, DocumentFilter(since=since), 2) == newest_first(
        [d for d in docs if d.fetched_at >= since]
    )
    harbour = [d for d in docs if "harbour" in (d.title + " " + (d.body or "")).lower()]
    assert len(harbour) == 4
    assert await walk(reader, DocumentFilter(search="Harbour"), 2) == newest_first(harbour)
    assert await walk(reader, DocumentFilter(search="harbour ferry"), 2) == [docs[3].url_hash]
    assert await walk(
        reader, DocumentFilter(search="harbour", source_id=blog, host="news.example"), 5
    ) == [docs[6].url_hash]
    assert await walk(reader, DocumentFilter(search="zeppelin"), 5) == []


async def test_one_document_with_its_body(stored: Any) -> None:
    reader, docs, _city, _blog = stored
    found = await reader.get(docs[2].url_hash)
    assert found is not None and found["body"] == docs[2].body and found["title"] == docs[2].title
    assert found["fetched_at"] == docs[2].fetched_at.isoformat()
    assert await reader.get("0" * 64) is None


async def test_search_input_is_text_not_syntax(db: Database) -> None:
    docs, _city, _blog = await seeded_documents(db)
    await PostgresSink(db).write(docs)
    reader = PostgresDocuments(db)
    for words in ('"harbour', "harbour & | ! :*", "()", "-harbour", "'; DROP TABLE x; --"):
        await reader.page(DocumentFilter(search=words), after=None, limit=5)  # no error
    phrase = await reader.page(DocumentFilter(search='"harbour bridge"'), after=None, limit=5)
    assert [item["url_hash"] for item in phrase.items] == [docs[0].url_hash]


async def test_sparse_and_dense_search_plans_page_alike(db: Database) -> None:
    """Under SPARSE_MATCHES matches the search reads the GIN index and sorts; above, it walks
    fetched_at. Both answer the same pages."""
    docs, city, _blog = await seeded_documents(db)
    await PostgresSink(db).write(docs)
    sparse, dense = PostgresDocuments(db), PostgresDocuments(db, sparse_matches=1)
    for where in (DocumentFilter(search="harbour"), DocumentFilter(search="the", source_id=city)):
        assert await walk(sparse, where, 2) == await walk(dense, where, 2) != []


async def test_the_stored_vector_is_of_title_and_body_cut_at_100000_characters(
    db: Database,
) -> None:
    """The sink's vector is `to_tsvector` of title and body cut at 100,000 characters
    (migration 0024), whichever way `upsert_many` gets there: `left` only when the text can
    be longer. Around the cut, in one-byte and in two-byte characters (more than 100,000
    bytes, fewer characters: nothing cut), without a title or a body."""
    docs, _city, _blog = await seeded_documents(db)
    words = "harbour ferry " * 7_200  # 100,800 characters
    texts = [
        (None, None), ("Title only", None), (None, "Body only."),
        ("t", words[:99_997]), ("t", words[:99_998]), ("t", words[:99_999]), ("t", words),
        ("Å", "ø" * 49_000 + " " + "é" * 2_000), ("Å", "ø" * 50_100 + " fjord"),
    ]  # fmt: skip
    written = [
        replace(doc, url_hash=url_hash(f"https://cut.example/{i}"), title=title, body=body)
        for i, (title, body) in enumerate(texts)
        for doc in docs[:1]
    ]
    await PostgresSink(db).write(written)
    rows = await db.fetch(
        "SELECT s.search = to_tsvector('simple'::regconfig,"
        "  left(coalesce(r.title, '') || ' ' || coalesce(r.body, ''), 100000)) AS same,"
        " r.body LIKE '%fjord' AS fjord_written, s.search @@ 'fjord'::tsquery AS fjord_found"
        " FROM raw_content r JOIN raw_content_search s USING (url_hash)"
        " WHERE r.url_hash = ANY ($1::char(64)[])",
        [d.url_hash for d in written],
    )
    assert len(rows) == len(texts) and all(row["same"] for row in rows)
    assert [(r["fjord_written"], r["fjord_found"]) for r in rows if r["fjord_written"]] == [
        (True, True)
    ]


async def test_search_uses_the_gin_index(db: Database) -> None:
    """The statement's tsvector expression is the index's, character for character (with
    sequential and plain index scans off, the planner can only use the GIN index if it
    matches; otherwise it falls back to a sequential scan anyway)."""
    from frontier.sql import load

    async with db.transaction() as tx:
        await tx.execute("SET LOCAL enable_seqscan = off")
        await tx.execute("SET LOCAL enable_indexscan = off")
        plan = await tx.fetch(
            "EXPLAIN " + load("raw_content")["search"],
            datetime.max.replace(tzinfo=UTC), "g", datetime.min.replace(tzinfo=UTC), 10,
            "harbour", None, None, False,
        )  # fmt: skip
    assert "raw_content_search_idx" in "\n".join(row[0] for row in plan)


# -- the API and the CLI ------------------------------------------------------------


@pytest.fixture
async def api(db: Database, fresh_dsn: str, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings.load(database_url=fresh_dsn, home=tmp_path, _env_file=None)
    app = create_app(settings, db)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as client:
        yield client


async def test_api_pages_filters_and_one_document(db: Database, api: httpx.AsyncClient) -> None:
    docs, _city, _blog = await seeded_documents(db)
    await PostgresSink(db).write(docs)
    seen: list[str] = []
    params: dict[str, Any] = {"limit": 3}
    while True:
        answer = await api.get("/api/v1/documents", params=params)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        seen += [item["url_hash"] for item in body["items"]]
        if body["next"] is None:
            break
        params["after"] = body["next"]
    assert seen == newest_first(docs)

    by_source = await api.get("/api/v1/documents", params={"source": "blog", "search": "harbour"})
    assert [i["url_hash"] for i in by_source.json()["items"]] == [docs[6].url_hash]
    by_host = await api.get("/api/v1/documents", params={"host": "https://NEWS.example/x"})
    assert {i["host"] for i in by_host.json()["items"]} == {"news.example"}
    recent = await api.get("/api/v1/documents", params={"since": "2026-11-20T13:00:00"})
    assert len(recent.json()["items"]) == 3  # 13:00 and the two at 14:00

    one = await api.get(f"/api/v1/documents/{docs[1].url_hash}")
    assert one.status_code == 200 and one.json()["body"] == docs[1].body
    # Any spelling of the URL names the same document (percent-encoded in the path).
    spelled = "https://BLOG.example:443/story/1?utm_source=x"
    by_url = await api.get("/api/v1/documents/" + quote(spelled, safe=""))
    assert by_url.status_code == 200 and by_url.json()["url_hash"] == docs[1].url_hash
    missing = await api.get(f"/api/v1/documents/{'0' * 64}")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"after": "nonsense"}, "after"),
        ({"after": "99999999999999999999.x"}, "after"),
        ({"since": "last tuesday"}, "since"),
        ({"source": "nope"}, "source"),
        ({"host": "http://"}, "host"),
        ({"search": "   "}, "search"),
        ({"search": "x" * 201}, "search"),
        ({"limit": "0"}, "limit"),
    ],
)
async def test_api_refuses_bad_parameters_with_a_reason(
    api: httpx.AsyncClient, params: dict[str, str], field: str
) -> None:
    answer = await api.get("/api/v1/documents", params=params)
    assert answer.status_code == 422, answer.text
    error = answer.json()["error"]
    assert field in {f["field"] for f in error["fields"]} or error["message"].startswith(field)


async def test_cli_lists_and_searches_documents(db: Database, fresh_dsn: str) -> None:
    docs, _city, _blog = await seeded_documents(db)
    await PostgresSink(db).write(docs)
    env = frontier_env(fresh_dsn)
    code, out, err = await frontier_output("documents", "--search", "harbour", "--json", env=env)
    assert code == 0, err
    listed = json.loads(out)
    assert [i["url_hash"] for i in listed["items"]] == newest_first(
        [d for d in docs if "harbour" in (d.title + d.body).lower()]
    )
    code, out, err = await frontier_output(
        "documents", "--host", "news.example", "--limit", "2", env=env
    )
    assert code == 0 and "Market day" in out and "https://news.example/story/6" in out
    assert "--after" in err  # the next page's cursor
    code, out, err = await frontier_output("documents", "--since", "yesterday-ish", env=env)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "since" in err


async def test_api_reads_the_configured_elasticsearch(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    """With FRONTIER_ELASTICSEARCH_URL set, the endpoints read the index, not the table."""
    docs, _city, blog = await seeded_documents(db)
    standin = await ElasticsearchStandIn().start()
    sink = ElasticsearchSink(standin.url, flush_interval_s=0)
    try:
        await sink.ensure_index()
        await sink.write(docs[:5])
        settings = Settings.load(
            database_url=fresh_dsn, home=tmp_path, elasticsearch_url=standin.url, _env_file=None
        )
        app = create_app(settings, db)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://test"
            ) as api,
        ):
            listed = await api.get("/api/v1/documents", params={"search": "harbour", "limit": 1})
            assert listed.status_code == 200, listed.text
            body = listed.json()
            assert [i["url_hash"] for i in body["items"]] == [docs[3].url_hash]
            following = await api.get(
                "/api/v1/documents", params={"search": "harbour", "after": body["next"]}
            )
            assert [i["url_hash"] for i in following.json()["items"]] == [
                docs[1].url_hash,
                docs[0].url_hash,
            ]
            by_source = await api.get("/api/v1/documents", params={"source": str(blog)})
            assert [i["url_hash"] for i in by_source.json()["items"]] == [docs[4].url_hash]
            one = await api.get(f"/api/v1/documents/{docs[0].url_hash}")
            assert one.json()["body"] == docs[0].body
            assert (await api.get(f"/api/v1/documents/{docs[6].url_hash}")).status_code == 404
        assert standin.rejected_requests == []
    finally:
        await sink.close()
        await standin.stop()


# -- one document per near-duplicate cluster -----------------------------------------


async def clustered(db: Database) -> list[RawDocument]:
    """The seeded documents, 2 and 4 near-duplicates of 0 (docs/duplicates.md)."""
    docs, _city, _blog = await seeded_documents(db)
    head = docs[0].url_hash
    return [replace(d, near_duplicate_of=head) if i in (2, 4) else d for i, d in enumerate(docs)]


@pytest.mark.parametrize("sink", ["postgres", "elasticsearch"])
async def test_one_document_per_cluster_from_either_sink(db: Database, sink: str) -> None:
    docs = await clustered(db)
    wanted = newest_first([d for i, d in enumerate(docs) if i not in (2, 4)])
    if sink == "postgres":
        await PostgresSink(db).write(docs)
        reader: DocumentReader = PostgresDocuments(db)
        assert await walk(reader, DocumentFilter(one_per_cluster=True), limit=2) == wanted
        assert await walk(reader, DocumentFilter(), limit=2) == newest_first(docs)
        searched = DocumentFilter(search="harbour", one_per_cluster=True)
        assert await walk(reader, searched, limit=10) == newest_first(
            [d for i, d in enumerate(docs) if i not in (2, 4) and "harbour" in (d.body or "")]
        )
        return
    async with on_standin(docs) as reader:
        assert await walk(reader, DocumentFilter(one_per_cluster=True), limit=2) == wanted


async def test_api_and_cli_keep_one_document_per_cluster(
    db: Database, api: httpx.AsyncClient, fresh_dsn: str
) -> None:
    docs = await clustered(db)
    await PostgresSink(db).write(docs)
    wanted = newest_first([d for i, d in enumerate(docs) if i not in (2, 4)])
    answer = await api.get("/api/v1/documents", params={"distinct": "cluster"})
    assert answer.status_code == 200, answer.text
    assert [i["url_hash"] for i in answer.json()["items"]] == wanted
    every = await api.get("/api/v1/documents")
    linked = {i["url_hash"]: i["near_duplicate_of"] for i in every.json()["items"]}
    assert linked[docs[2].url_hash] == docs[0].url_hash and linked[docs[0].url_hash] is None
    bad = await api.get("/api/v1/documents", params={"distinct": "host"})
    assert bad.status_code == 422
    code, out, err = await frontier_output(
        "documents", "--one-per-cluster", "--json", env=frontier_env(fresh_dsn)
    )
    assert code == 0, err
    assert [i["url_hash"] for i in json.loads(out)["items"]] == wanted
