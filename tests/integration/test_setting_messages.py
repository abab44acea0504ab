"""Error messages that come from a setting name it, so the reader knows what to change:
the SSRF guard (FRONTIER_ALLOW_PRIVATE_NETWORKS), the API's tokens (FRONTIER_API_TOKEN,
FRONTIER_API_READ_AUTH), the database (FRONTIER_DATABASE_URL) and the Elasticsearch sink
(FRONTIER_ELASTICSEARCH_URL). The first is the newcomer's story of issue 16: a local URL
refused before the setting was set ends dead with a message naming it, and once it is set,
requeueing the URL fetches it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from frontier.api.app import create_app
from frontier.db import Database
from frontier.settings import Settings
from frontier.sinks import RawDocument, SinkUnavailable
from frontier.sinks.elasticsearch import ElasticsearchSink
from frontier.url_actions import UrlActions, parse_filter
from tests.fetch_harness import after, article, fetcher_for, frontier_row, submit
from tests.local_site import LocalSite
from tests.processes import clean_env, free_port, frontier_output

TOKEN = "test-token-0123456789abcdef0123456789"


async def test_a_private_address_names_the_setting_and_a_requeue_fetches_it_once_set(
    db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/news/1", article("Local news"))
    await submit(db, local_site.url("/news/1"))
    async with fetcher_for(db, allow_private_networks=False) as fetcher:
        await fetcher.run_once()
    row = await frontier_row(db, local_site.url("/news/1"))
    assert (row["status"], row["dead_reason"]) == ("dead", "blocked_by_policy")
    assert "set FRONTIER_ALLOW_PRIVATE_NETWORKS=true" in row["last_error"]
    assert local_site.requests == []  # refused before any request

    now = after(0)
    requeued = await UrlActions(db).requeue(parse_filter(reason="blocked_by_policy", now=now))
    assert requeued.changed == 1
    async with fetcher_for(db) as fetcher:  # the setting on
        assert (await fetcher.run_once(now=after(5))).claimed == 1
    assert (await frontier_row(db, local_site.url("/news/1")))["status"] == "fetched"
    assert len(local_site.hits("/news/1")) == 1


async def test_token_refusals_name_the_settings(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    def app(**values: object) -> httpx.AsyncClient:
        settings = Settings.load(database_url=fresh_dsn, home=tmp_path, _env_file=None, **values)
        transport = httpx.ASGITransport(app=create_app(settings, db))
        return httpx.AsyncClient(transport=transport, base_url="http://test")

    async with app(api_token=TOKEN) as api:
        wrong = await api.post(
            "/api/v1/urls/requeue", headers={"Authorization": "Bearer nope"}, json={}
        )
        assert wrong.status_code == 401
        assert "FRONTIER_API_TOKEN" in wrong.json()["error"]["message"]
    async with app(api_read_auth=True) as api:
        read = await api.get("/api/v1/stats")
        assert read.status_code == 403
        message = read.json()["error"]["message"]
        assert "FRONTIER_API_READ_AUTH" in message and "FRONTIER_API_TOKEN" in message
    async with app() as api:
        write = await api.post("/api/v1/urls/purge", json={})
        assert write.status_code == 403
        assert "FRONTIER_API_TOKEN" in write.json()["error"]["message"]


async def test_serve_refuses_to_start_with_an_example_or_short_token(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """`change-me-*` and short tokens were accepted (issue 35): the API started and took
    them as its write token."""
    for token, told in (("change-me-too", "an example value"), ("short", "at least 32")):
        env = {**clean_env(fresh_dsn), "FRONTIER_HOME": str(tmp_path), "FRONTIER_API_TOKEN": token}
        code, out, err = await frontier_output("serve", "--port", str(free_port()), env=env)
        assert (code, out) == (2, ""), err
        assert len(err.strip().splitlines()) == 1, err
        assert "FRONTIER_API_TOKEN" in err and told in err and token not in err


async def test_an_unreachable_database_names_frontier_database_url(tmp_path: Path) -> None:
    dsn = "postgresql://frontier:s3cret@127.0.0.1:9/frontier"  # discard: nothing listens
    code, out, err = await frontier_output(
        "status", env={**clean_env(dsn), "FRONTIER_HOME": str(tmp_path)}
    )
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1, err
    assert "FRONTIER_DATABASE_URL" in err and "s3cret" not in err


async def test_an_unreachable_elasticsearch_names_frontier_elasticsearch_url() -> None:
    sink = ElasticsearchSink("http://elastic:s3cret@127.0.0.1:9", attempts=1, backoff_s=0)
    try:
        with pytest.raises(SinkUnavailable) as refused:
            await sink.ensure_index()
        message = str(refused.value)
        assert "FRONTIER_ELASTICSEARCH_URL" in message and "127.0.0.1:9" in message
        assert "s3cret" not in message
        with pytest.raises(SinkUnavailable, match="FRONTIER_ELASTICSEARCH_URL"):
            await sink.write([_document()])
    finally:
        await sink.close()


def _document() -> RawDocument:
    from datetime import UTC, datetime

    return RawDocument(
        url_hash="0" * 64,
        url="https://example.org/a",
        final_url=None,
        source_id=None,
        source_name=None,
        host="example.org",
        origin="manual",
        title="t",
        body="b",
        summary=None,
        author=None,
        published_at=None,
        image_url=None,
        language=None,
        content_hash=None,
        word_count=1,
        extractor="generic",
        http_status=200,
        fetched_at=datetime.now(UTC),
    )
