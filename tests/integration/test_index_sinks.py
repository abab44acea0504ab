"""The built-in index sinks end to end (issue 33 item 1): Elasticsearch 8 and 9 and
OpenSearch, each written by the fetcher's run_once against a stand-in answering as that
server does (tests/es_standin.py), or against a real server when
FRONTIER_TEST_ELASTICSEARCH_URL / FRONTIER_TEST_OPENSEARCH_URL is set; the compatibility
headers each client sends and each server refuses; a server of the wrong kind refused
with a message naming the right sink."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from fetcher.sink_kinds import ElasticsearchKind, OpenSearchKind
from frontier.db import Database
from frontier.documents import DocumentFilter, ExportQuery
from frontier.export import run_export
from frontier.settings import Settings, SettingsError
from frontier.sinks import Sink
from frontier.sinks.configured import open_reader
from frontier.sinks.opensearch import OpenSearchOptions
from frontier.sinks.postgres import PostgresDocuments, PostgresSink
from frontier.urls import url_hash
from tests.es_standin import ElasticsearchStandIn, OpenSearchStandIn
from tests.fetch_harness import after, article, fetcher_for, frontier_row, submit
from tests.full_documents import full_document
from tests.local_site import LocalSite

END = datetime(2100, 1, 1, tzinfo=UTC)
REAL = {
    "elasticsearch": os.environ.get("FRONTIER_TEST_ELASTICSEARCH_URL"),
    "opensearch": os.environ.get("FRONTIER_TEST_OPENSEARCH_URL"),
}
# (sink, the stand-in, the compatible-with the client must send once it knows the server)
SERVERS = {
    "es8": ("elasticsearch", lambda: ElasticsearchStandIn(version="8.19.3"), 8),
    "es9": ("elasticsearch", lambda: ElasticsearchStandIn(version="9.1.5"), 9),
    "opensearch": ("opensearch", lambda: OpenSearchStandIn(), None),
}


@pytest.fixture
async def server(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """A stand-in started, or None for a real server's URL."""
    _sink, make, _compat = SERVERS[request.param]
    if request.param.endswith("-real"):
        yield None
        return
    standin = await make().start()
    try:
        yield standin
    finally:
        await standin.stop()


async def open_index_sink(
    kind: str, url: str, index: str, tmp_path: Path, db: Database
) -> tuple[Sink, Settings]:
    if kind == "elasticsearch":
        settings = Settings.load(
            home=tmp_path, _env_file=None, elasticsearch_url=url, elasticsearch_index=index
        )
        return await ElasticsearchKind().open(settings, db, None), settings
    options = {"url": url, "index": index, "flush_ms": 0}
    settings = Settings.load(home=tmp_path, _env_file=None, sink="opensearch", sink_options=options)
    return await OpenSearchKind().open(settings, db, OpenSearchOptions(**options)), settings


async def fetch_into(
    db: Database, site: LocalSite, sink: Sink, settings: Settings, titles: list[str]
) -> list[dict[str, Any]]:
    """The articles `titles` fetched by the fetcher's run_once into `sink`, read back by
    the configured reader (the index's)."""
    urls = []
    for n, title in enumerate(titles):
        site.serve(f"/idx/{n}", article(title))
        urls.append(site.url(f"/idx/{n}"))
    await submit(db, *urls)
    async with fetcher_for(db, sink=sink) as fetcher:
        for k in range(len(urls)):  # one URL of a host per claim (its politeness)
            await fetcher.run_once(now=after(60 * k))
    for url in urls:
        row = await frontier_row(db, url)
        assert row["status"] == "fetched", row["last_error"]
    reader = open_reader(settings, db)
    assert reader.name == (settings.sink or "elasticsearch")  # the dashboard names it
    try:
        stored = [await reader.get(url_hash(url)) for url in urls]
        host = f"{site.address}:{site.port}"
        listed = await reader.page(DocumentFilter(host=host), after=None, limit=10)
    finally:
        await reader.close()
    assert {d["url_hash"] for d in listed.items} == {url_hash(u) for u in urls}
    return [d for d in stored if d is not None]


@pytest.mark.parametrize("server", list(SERVERS), indirect=True)
async def test_the_fetcher_writes_to_each_server_with_its_headers(
    db: Database, tmp_path: Path, local_site: LocalSite, server: Any, request: pytest.FixtureRequest
) -> None:
    name = request.node.callspec.params["server"]
    kind, _make, compat = SERVERS[name]
    sink, settings = await open_index_sink(kind, server.url, "docs", tmp_path, db)
    try:
        health = await sink.health()
        stored = await fetch_into(db, local_site, sink, settings, ["Harbour", "Ferry"])
    finally:
        await sink.close()
    assert [d["title"] for d in stored] == ["Harbour", "Ferry"]
    assert "Harbour paragraph 0" in stored[0]["body"]
    assert set(server.indices["docs"]) == {d["url_hash"] for d in stored}
    product = "OpenSearch" if kind == "opensearch" else "Elasticsearch"
    assert health == f"{product} {server.version} at {server.url}, index docs"
    # The version was asked first in plain JSON (by the sink, then by the reader); every
    # other request asked for the server's own major, or (to OpenSearch) plain JSON.
    assert server.compatible_with[0] == ("/", None)
    assert {c for path, c in server.compatible_with if path == "/"} == {None}
    assert {c for path, c in server.compatible_with if path != "/"} == {compat}
    assert server.rejected_requests == []


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(k, marks=pytest.mark.needs_env(f"FRONTIER_TEST_{k.upper()}_URL"))
        for k in ("elasticsearch", "opensearch")
    ],
)
async def test_against_a_real_server(
    db: Database, tmp_path: Path, local_site: LocalSite, kind: str
) -> None:
    url = REAL[kind]
    assert url  # collected only when it is set (needs_env)
    index = f"frontier-test-{os.getpid()}"
    sink, settings = await open_index_sink(kind, url, index, tmp_path, db)
    try:
        assert (await sink.health()).endswith(f", index {index}")
        stored = await fetch_into(db, local_site, sink, settings, ["Harbour"])
    finally:
        await sink.close()
        async with httpx.AsyncClient() as client:
            await client.delete(f"{url}/{index}")
    assert [d["title"] for d in stored] == ["Harbour"]


async def test_each_server_refuses_the_media_types_it_does_not_serve() -> None:
    """As the servers answer: an 8.x refuses compatible-with=9 (what a 9.x client sends);
    a 9.x serves 8 and 9 and refuses 7; OpenSearch refuses the Elasticsearch media type."""

    def headers(n: int) -> dict[str, str]:
        value = f"application/vnd.elasticsearch+json; compatible-with={n}"
        return {"Accept": value, "Content-Type": value}

    es8, es9, opensearch = (make() for _sink, make, _c in SERVERS.values())
    for standin in (es8, es9, opensearch):
        await standin.start()
    try:
        async with httpx.AsyncClient() as client:

            async def status(standin: Any, n: int) -> tuple[int, Any]:
                answer = await client.get(f"{standin.url}/", headers=headers(n))
                return answer.status_code, answer.json().get("error")

            refused = await status(es8, 9)
            assert refused[0] == 400 and refused[1]["type"] == "media_type_header_exception"
            assert "version must be either version 8 or 7, but found 9" in str(refused[1])
            assert (await status(es8, 8))[0] == 200
            assert (await status(es9, 8))[0] == (await status(es9, 9))[0] == 200
            assert (await status(es9, 7))[1]["type"] == "media_type_header_exception"
            body = await client.put(f"{opensearch.url}/x", json={}, headers=headers(8))
            assert body.status_code == 406 and body.json()["error"] == (
                "Content-Type header [application/vnd.elasticsearch+json; compatible-with=8] "
                "is not supported"
            )
            plain = await client.get(opensearch.url)
            assert plain.json()["version"]["distribution"] == "opensearch"
            assert "X-Elastic-Product" not in plain.headers
    finally:
        for standin in (es8, es9, opensearch):
            await standin.stop()


async def test_a_server_of_the_wrong_kind_names_the_sink_to_use(
    db: Database, tmp_path: Path
) -> None:
    opensearch = await OpenSearchStandIn().start()
    es7 = await ElasticsearchStandIn(version="7.17.20").start()
    es9 = await ElasticsearchStandIn(version="9.1.5").start()
    try:
        told = [
            (opensearch, "elasticsearch", "is OpenSearch 2.19.1, not Elasticsearch: use "
             "FRONTIER_SINK=opensearch"),
            (es7, "elasticsearch", "FRONTIER_ELASTICSEARCH_URL: Elasticsearch at "
             f"{es7.url} (FRONTIER_ELASTICSEARCH_URL): the server is Elasticsearch 7.17.20: "
             "the elasticsearch sink speaks to Elasticsearch 8 and 9"),
            (es9, "opensearch", "FRONTIER_SINK_OPTIONS url: OpenSearch at "
             f"{es9.url} (FRONTIER_SINK_OPTIONS url): the server is Elasticsearch 9.1.5, not "
             "OpenSearch: use FRONTIER_SINK=elasticsearch"),
        ]  # fmt: skip
        for standin, kind, message in told:
            with pytest.raises(SettingsError) as refused:
                await open_index_sink(kind, standin.url, "d", tmp_path, db)
            assert message in str(refused.value)
    finally:
        for standin in (opensearch, es7, es9):
            await standin.stop()


@pytest.mark.parametrize("server", ["es9", "opensearch"], indirect=True)
async def test_an_export_reads_the_index_as_it_reads_the_table(
    db: Database, tmp_path: Path, server: Any, request: pytest.FixtureRequest
) -> None:
    """The same documents in the index and in raw_content export the same lines, whatever
    the filters (pages of 2: search_after on the sort values)."""
    kind = SERVERS[request.node.callspec.params["server"]][0]
    docs = [full_document(i) for i in range(7)]
    docs[4] = replace(docs[4], near_duplicate_of=docs[1].url_hash)
    sink, settings = await open_index_sink(kind, server.url, "docs", tmp_path, db)
    try:
        await sink.write(docs)
    finally:
        await sink.close()
    await PostgresSink(db).write(docs)
    index_reader = open_reader(settings, db)
    cases = [
        ExportQuery(DocumentFilter(), until=END, with_body=True),
        ExportQuery(DocumentFilter(host="h1.example", one_per_cluster=True), until=END),
        ExportQuery(DocumentFilter(since=docs[2].fetched_at), until=docs[5].fetched_at),
        ExportQuery(DocumentFilter(), until=END, language="en"),
    ]
    try:
        for n, query in enumerate(cases):
            lines = []
            for reader in (index_reader, PostgresDocuments(db)):
                out = tmp_path / f"{n}-{reader.name}.jsonl"
                await run_export(reader, query, "jsonl", str(out), page_rows=2)
                lines.append(out.read_text().splitlines())
            assert lines[0] == lines[1], query
            assert lines[0], query  # each case exports something
    finally:
        await index_reader.close()
    by_language = [json.loads(line)["url_hash"] for line in lines[0]]
    assert by_language == [docs[i].url_hash for i in (0, 2, 3, 5, 6)]
