"""Content sinks as plugins (issue 33 item 1): the entry-point group `frontier.sinks`, the
built-ins registered in it, FRONTIER_SINK choosing one by name (unset: as before, by
FRONTIER_ELASTICSEARCH_URL), the settings errors of a sink that is not installed, broken,
or given bad options, the sinks' health, and a third-party sink installed from a test
package (tests/plugin_sink) written to by a real `frontier fetch --until-idle`."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from frontier.db import Database
from frontier.settings import Settings, SettingsError
from frontier.sinks import DocumentRejected, RawDocument, SinkUnavailable
from frontier.sinks.configured import open_reader, open_sink, sink_name
from frontier.sinks.elasticsearch import ElasticsearchDocuments, ElasticsearchSink
from frontier.sinks.installed import SinkRegistry, load_sinks
from frontier.sinks.postgres import PostgresDocuments, PostgresSink
from frontier.urls import url_hash
from tests.es_standin import SERVER_VERSION, ElasticsearchStandIn
from tests.fetch_harness import article, submit
from tests.local_site import LocalSite
from tests.processes import free_port, frontier_env, frontier_output

PLUGIN = Path(__file__).resolve().parents[1] / "plugin_sink"


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> SinkRegistry:
    """The test plugin installed: its folder (package + .dist-info) on sys.path."""
    monkeypatch.syspath_prepend(str(PLUGIN))
    return load_sinks()


def settings(tmp_path: Path, **values: object) -> Settings:
    return Settings.load(home=tmp_path, _env_file=None, **values)


def test_the_built_in_sinks_are_registered_in_the_entry_point_group() -> None:
    installed = load_sinks()
    assert {"postgres", "elasticsearch", "opensearch", "jsonl"} <= set(installed.sinks), (
        "the installed metadata predates the frontier.sinks group: `pip install -e . --no-deps`"
    )
    assert installed.broken == {}


def test_a_plugin_sink_is_installed_and_a_broken_one_is_told_apart(
    plugin: SinkRegistry,
) -> None:
    assert {"postgres", "elasticsearch", "lines"} <= set(plugin.sinks)
    assert "broken" not in plugin.sinks
    assert plugin.missing("broken").startswith("sink 'broken' failed to load: AttributeError")
    installed = ", ".join(sorted(plugin.sinks))  # the built-ins and the plugin's `lines`
    assert plugin.missing("nope") == f"sink 'nope' is not installed (installed: {installed})"


def test_unset_frontier_sink_chooses_as_before(tmp_path: Path) -> None:
    assert sink_name(settings(tmp_path)) == "postgres"
    with_es = settings(tmp_path, elasticsearch_url="http://127.0.0.1:9200")
    assert sink_name(with_es) == "elasticsearch"
    chosen = settings(tmp_path, elasticsearch_url="http://127.0.0.1:9200", sink="postgres")
    assert sink_name(chosen) == "postgres"


async def test_frontier_sink_opens_the_built_in_it_names_and_its_reader_follows(
    db: Database, tmp_path: Path, standin: ElasticsearchStandIn
) -> None:
    by_default = await open_sink(settings(tmp_path), db)
    assert isinstance(by_default, PostgresSink)
    assert await by_default.health() == "PostgreSQL table raw_content"
    es = settings(tmp_path, elasticsearch_url=standin.url, elasticsearch_index="docs")
    sink = await open_sink(es, db)
    try:
        assert isinstance(sink, ElasticsearchSink)
        assert "docs" in standin.indices  # opened: its index created
        assert await sink.health() == (
            f"Elasticsearch {SERVER_VERSION} at {standin.url}, index docs"
        )
        standin.down = True
        with pytest.raises(SinkUnavailable, match="FRONTIER_ELASTICSEARCH_URL"):
            await sink.health()
    finally:
        await sink.close()
    reader = open_reader(es, db)
    try:
        assert isinstance(reader, ElasticsearchDocuments)
    finally:
        await reader.close()
    postgres = settings(tmp_path, elasticsearch_url=standin.url, sink="postgres")
    assert isinstance(await open_sink(postgres, db), PostgresSink)
    assert isinstance(open_reader(postgres, db), PostgresDocuments)


async def test_a_plugin_sink_keeps_the_interface_in_process(
    db: Database, tmp_path: Path, plugin: SinkRegistry
) -> None:
    """Opened from FRONTIER_SINK and FRONTIER_SINK_OPTIONS: health, a batch with a refused
    document (its reason by url_hash, the others stored), a deletion."""
    out = tmp_path / "d.jsonl"
    chosen = settings(
        tmp_path, sink="lines", sink_options={"path": str(out), "refuse_hosts": ["b.test"]}
    )
    sink = await open_sink(chosen, db, plugin)
    assert await sink.health() == f"JSON lines in {out}"
    kept, refused = document(1, "a.test"), document(2, "b.test")
    with pytest.raises(DocumentRejected) as rejected:
        await sink.write([kept, refused])
    assert rejected.value.reasons == {refused.url_hash: "host refused by this sink"}
    await sink.delete([kept.url_hash])
    await sink.close()
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines == [kept.as_json(), {"deleted": kept.url_hash}]


def document(n: int, host: str) -> RawDocument:
    return RawDocument(
        url_hash=f"{n:064x}",
        url=f"http://{host}/{n}",
        final_url=None,
        source_id=None,
        source_name="manual",
        host=host,
        origin="manual",
        title=f"T{n}",
        body="words " * n,
        summary=None,
        author=None,
        published_at=None,
        image_url=None,
        language="en",
        content_hash=f"{n:064x}",
        word_count=n,
        extractor="generic",
        http_status=200,
        fetched_at=datetime(2030, 1, 2, tzinfo=UTC),
    )


@pytest.mark.parametrize(
    "values, told",
    [
        (
            {"sink": "nope"},
            "FRONTIER_SINK: sink 'nope' is not installed (installed: elasticsearch, ",
        ),
        ({"sink": "broken"}, "FRONTIER_SINK: sink 'broken' failed to load: AttributeError"),
        ({"sink": "elasticsearch"}, "FRONTIER_SINK=elasticsearch needs FRONTIER_ELASTICSEARCH_URL"),
        ({"sink": "lines"}, "FRONTIER_SINK_OPTIONS of sink 'lines': path: Field required"),
        (
            {"sink": "postgres", "sink_options": {"path": "x"}},
            "FRONTIER_SINK_OPTIONS of sink 'postgres': path: Extra inputs are not permitted",
        ),
    ],
    ids=["unknown", "broken", "es-without-url", "plugin-options", "built-in-options"],
)
async def test_a_sink_that_cannot_be_opened_is_a_settings_error(
    db: Database, tmp_path: Path, plugin: SinkRegistry, values: dict[str, object], told: str
) -> None:
    with pytest.raises(SettingsError) as refused:
        await open_sink(settings(tmp_path, **values), db, plugin)
    assert str(refused.value).startswith("invalid configuration: ")
    assert told in str(refused.value)


async def test_an_unknown_frontier_sink_stops_frontier_fetch_with_one_line(
    fresh_dsn: str, tmp_path: Path
) -> None:
    env = frontier_env(fresh_dsn, FRONTIER_SINK="nope", FRONTIER_HOME=str(tmp_path))
    code, out, err = await frontier_output("fetch", "--until-idle", env=env)
    assert (code, out) == (2, ""), err
    assert len(err.strip().splitlines()) == 1, err
    assert "FRONTIER_SINK: sink 'nope' is not installed (installed: " in err
    assert "postgres" in err and "elasticsearch" in err


async def test_frontier_up_refuses_an_unknown_sink_before_it_starts_anything(
    fresh_dsn: str, tmp_path: Path
) -> None:
    env = frontier_env(fresh_dsn, FRONTIER_SINK="nope", FRONTIER_HOME=str(tmp_path))
    code, out, err = await frontier_output("up", "--port", str(free_port()), env=env)
    assert (code, out) == (2, ""), err
    assert len(err.strip().splitlines()) == 1, err
    assert "FRONTIER_SINK: sink 'nope' is not installed (installed: " in err


async def test_frontier_fetch_writes_to_a_plugin_sink_installed_from_a_package(
    db: Database, fresh_dsn: str, tmp_path: Path, local_site: LocalSite
) -> None:
    """A real `frontier fetch --until-idle` with FRONTIER_SINK=lines: the fetched articles
    are the file's lines, raw_content stays empty, and the documents the plugin refuses
    (DocumentRejected) end `failed` with its reason while the rest of the batch is stored."""
    for n in (1, 2, 3):
        local_site.serve(f"/news/{n}", article(f"Harbour story {n}"))
    refused_site = LocalSite("127.0.0.9")
    await refused_site.start()
    try:
        refused_site.serve("/news/9", article("Refused story"))
        urls = [local_site.url(f"/news/{n}") for n in (1, 2, 3)]
        await submit(db, *urls, refused_site.url("/news/9"))
        out_file = tmp_path / "documents.jsonl"
        refused_host = f"{refused_site.address}:{refused_site.port}"  # a document's `host`
        options = {"path": str(out_file), "refuse_hosts": [refused_host]}
        path = os.pathsep.join(p for p in (str(PLUGIN), os.environ.get("PYTHONPATH")) if p)
        env = frontier_env(
            fresh_dsn,
            FRONTIER_SINK="lines",
            FRONTIER_SINK_OPTIONS=json.dumps(options),
            FRONTIER_HOME=str(tmp_path),
            FRONTIER_ARCHIVE_DIR=str(tmp_path / "archive"),
            FRONTIER_DEFAULT_DELAY_MS="0",
            PYTHONPATH=path,
        )
        code, _out, err = await frontier_output("fetch", "--until-idle", env=env)
    finally:
        await refused_site.stop()
    assert code == 0, err

    lines = [json.loads(line) for line in out_file.read_text().splitlines()]
    by_url = {line["url"]: line for line in lines}
    assert sorted(by_url) == sorted(urls) and len(lines) == 3  # each once, none refused
    story = by_url[local_site.url("/news/2")]
    assert story["title"] == "Harbour story 2"
    assert story["url_hash"] == url_hash(local_site.url("/news/2"))
    assert "Harbour story 2 paragraph 0" in story["body"]
    assert story["word_count"] > 50 and story["fetched_at"]
    assert await db.fetchval("SELECT count(*) FROM raw_content") == 0
    states = {
        r["url"]: (r["status"], r["last_error"])
        for r in await db.fetch("SELECT url, status, last_error FROM url_frontier")
    }
    assert {u: states[u][0] for u in urls} == dict.fromkeys(urls, "fetched")
    state, error = states[refused_site.url("/news/9")]
    assert state == "failed", state
    assert error == "sink lines refused the document: host refused by this sink"


def test_the_demo_writes_to_its_own_database_whatever_frontier_sink_names(
    tmp_path: Path,
) -> None:
    from frontier_cli.demo.profile import demo_settings

    chosen = settings(tmp_path, sink="jsonl", sink_options={"path": str(tmp_path / "d.jsonl")})
    demo = demo_settings(chosen)
    assert sink_name(demo) == "postgres" and demo.sink_options is None
