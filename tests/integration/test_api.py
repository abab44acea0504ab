"""The HTTP API against a real PostgreSQL: auth, validation errors, sources, import,
keyset pagination, stats, fetch log and metrics (in-process over httpx's ASGI transport)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import poller.service
from frontier.api.app import create_app
from frontier.api.queries import ApiQueries, FrontierFilter
from frontier.db import Database
from frontier.fetch_log import FetchLogRepository, LogEntry
from frontier.hosts import HostRepository, KeyBusy
from frontier.imports import MAX_LINE_BYTES
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, SourceRef, claim_hold
from frontier.settings import Settings
from frontier.states import FetchKind, LogOutcome, Origin

TOKEN = "test-token-0123456789abcdef0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def make_settings(dsn: str, home: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"database_url": dsn, "home": home, "api_token": TOKEN}
    values.update(overrides)
    return Settings.load(**values, _env_file=None)


async def client_for(
    settings: Settings, db: Database, *, with_fire: bool = True
) -> httpx.AsyncClient:
    app = create_app(settings, db, fire=poller.service.fire if with_fire else None)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


@pytest.fixture
async def api(db: Database, fresh_dsn: str, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async with await client_for(make_settings(fresh_dsn, tmp_path), db) as client:
        yield client


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "fields"}
    assert body["error"]["code"] == code
    error: dict[str, Any] = body["error"]
    return error


def fields_of(error: dict[str, Any]) -> set[str]:
    return {field["field"] for field in error["fields"]}


# -- auth ---------------------------------------------------------------------------


async def test_writes_need_the_bearer_token(api: httpx.AsyncClient) -> None:
    body = {"name": "example"}
    assert_error(await api.post("/api/v1/sources", json=body), 401, "unauthorized")
    wrong = {"Authorization": "Bearer nope"}
    response = await api.post("/api/v1/sources", json=body, headers=wrong)
    assert_error(response, 401, "unauthorized")
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert (await api.post("/api/v1/sources", json=body, headers=AUTH)).status_code == 201
    # Reads are open by default.
    assert (await api.get("/api/v1/sources")).status_code == 200


async def test_without_a_configured_token_writes_are_refused_with_how_to(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    settings = make_settings(fresh_dsn, tmp_path, api_token=None)
    async with await client_for(settings, db) as client:
        response = await client.post("/api/v1/import", content=b"http://a.example/\n", headers=AUTH)
        error = assert_error(response, 403, "writes_disabled")
        assert "FRONTIER_API_TOKEN" in error["message"]
        assert await db.fetchval("SELECT count(*) FROM url_frontier") == 0


async def test_read_auth_setting_gates_reads(db: Database, fresh_dsn: str, tmp_path: Path) -> None:
    settings = make_settings(fresh_dsn, tmp_path, api_read_auth=True)
    async with await client_for(settings, db) as client:
        for path in ("/api/v1/stats", "/api/v1/frontier", "/metrics", "/"):
            assert_error(await client.get(path), 401, "unauthorized")
            assert (await client.get(path, headers=AUTH)).status_code == 200, path
        assert (await client.get("/healthz")).json() == {"status": "ok", "database": "ok"}


# -- sources ------------------------------------------------------------------------


async def test_source_crud(api: httpx.AsyncClient, db: Database) -> None:
    created = await api.post(
        "/api/v1/sources",
        headers=AUTH,
        json={
            "name": "Example News",
            "feed_url": "https://News.Example/feed.xml",
            "sitemap_url": "https://news.example/sitemap.xml",
            "ingestion_mode": "both",
            "priority": 7,
            "feed_poll_interval_minutes": 30,
            "rate_limit_ms": 0,
            "selectors": {"title": "h1", "body": "article"},
            "article_url_patterns": [r"/\d{4}/\d{2}/"],
            "url_filters": {"include": ["/news/"], "keywords": ["election"]},
        },
    )
    assert created.status_code == 201, created.text
    source = created.json()
    assert source["feed_url"] == "https://news.example/feed.xml"  # normalised
    assert source["selectors"] == {"title": "h1", "body": "article"}
    assert source["url_filters"] == {"include": ["/news/"], "keywords": ["election"]}
    sid = source["id"]
    assert (
        await db.fetchval("SELECT feed_url FROM feed_state WHERE source_id = $1::uuid", sid)
        == "https://news.example/feed.xml"
    )

    patched = await api.patch(
        f"/api/v1/sources/{sid}", headers=AUTH, json={"priority": 2, "enabled": False}
    )
    assert patched.status_code == 200, patched.text
    after = patched.json()
    assert (after["priority"], after["enabled"]) == (2, False)
    assert after["feed_url"] == source["feed_url"] and after["ingestion_mode"] == "both"
    assert (await api.get(f"/api/v1/sources/{sid}")).json()["priority"] == 2
    names = [s["name"] for s in (await api.get("/api/v1/sources")).json()]
    assert {"Example News", "manual"} <= set(names) and names == sorted(names)

    assert (await api.delete(f"/api/v1/sources/{sid}", headers=AUTH)).status_code == 204
    assert_error(await api.get(f"/api/v1/sources/{sid}"), 404, "not_found")
    assert_error(await api.delete(f"/api/v1/sources/{sid}", headers=AUTH), 404, "not_found")
    manual = await db.fetchval("SELECT id FROM sources WHERE name = 'manual'")
    error = assert_error(
        await api.delete(f"/api/v1/sources/{manual}", headers=AUTH), 422, "validation_error"
    )
    assert "manual" in error["message"]


async def test_validation_errors_name_the_field(api: httpx.AsyncClient) -> None:
    response = await api.post(
        "/api/v1/sources",
        headers=AUTH,
        json={
            "name": "x",
            "priority": 11,
            "article_url_patterns": ["(unclosed"],
            "url_filters": {"exclude": ["[bad"]},
            "ingestion_mode": "rss",
            "colour": "red",
        },
    )
    error = assert_error(response, 422, "validation_error")
    assert fields_of(error) == {
        "priority",
        "article_url_patterns",
        "url_filters.exclude",
        "ingestion_mode",
        "colour",
    }
    assert "priority" in error["message"]

    response = await api.post(
        "/api/v1/sources", headers=AUTH, json={"name": "y", "feed_url": "ftp://example.com/feed"}
    )
    error = assert_error(response, 422, "validation_error")
    assert error["fields"][0]["field"] == "feed_url"

    assert (await api.post("/api/v1/sources", headers=AUTH, json={"name": "z"})).is_success
    error = assert_error(
        await api.post("/api/v1/sources", headers=AUTH, json={"name": "z"}), 422, "validation_error"
    )
    assert fields_of(error) == {"name"} and "already exists" in error["message"]

    sid = (await api.get("/api/v1/sources")).json()[-1]["id"]
    error = assert_error(
        await api.patch(f"/api/v1/sources/{sid}", headers=AUTH, json={"priority": None}),
        422,
        "validation_error",
    )
    assert fields_of(error) == {"priority"}
    error = assert_error(await api.get("/api/v1/sources/not-a-uuid"), 422, "validation_error")
    assert fields_of(error) == {"source_id"}
    broken = await api.post(
        "/api/v1/sources", content=b"{", headers={**AUTH, "Content-Type": "application/json"}
    )
    assert assert_error(broken, 422, "validation_error")["fields"]


# -- import -------------------------------------------------------------------------

MIXED_TEXT = (
    "\n".join(
        [
            "http://a.example/1",  # 1 accepted
            "http://a.example/1#fragment",  # 2 duplicate (same once normalised)
            "",  # 3 blank: skipped
            "# a comment",  # 4 skipped
            "ftp://a.example/file",  # 5 rejected: scheme
            "not a url",  # 6 rejected
            "https://b.example/2?utm_source=x",  # 7 accepted
            "x" * (MAX_LINE_BYTES + 10),  # 8 rejected: too long
            "http://c.example/3",  # 9 accepted
        ]
    )
    + "\n"
)


async def test_import_text_with_mixed_lines_gives_exact_counts(
    api: httpx.AsyncClient, db: Database
) -> None:
    response = await api.post("/api/v1/import", headers=AUTH, content=MIXED_TEXT.encode())
    assert response.status_code == 200, response.text
    result = response.json()
    assert (result["accepted"], result["duplicate"], result["rejected"]) == (3, 1, 3)
    assert [e["line"] for e in result["errors"]] == [5, 6, 8]
    assert "longer than" in result["errors"][2]["reason"]
    assert await db.fetchval("SELECT count(*) FROM url_frontier WHERE origin = 'manual'") == 3
    again = (await api.post("/api/v1/import", headers=AUTH, content=MIXED_TEXT.encode())).json()
    assert (again["accepted"], again["duplicate"], again["rejected"]) == (0, 4, 3)


async def test_import_streams_a_chunked_body_split_mid_line(
    api: httpx.AsyncClient, db: Database
) -> None:
    lines = [f"http://h{i % 7}.example/article/{i}" for i in range(12_000)]
    payload = ("\n".join(lines) + "\n").encode()

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(payload), 777):  # cuts through lines and batches
            yield payload[start : start + 777]

    response = await api.post("/api/v1/import", headers=AUTH, content=chunks())
    result = response.json()
    assert (result["accepted"], result["duplicate"], result["rejected"]) == (12_000, 0, 0)
    assert await db.fetchval("SELECT count(*) FROM url_frontier") == 12_000


async def test_import_ndjson_and_json_bodies(api: httpx.AsyncClient, db: Database) -> None:
    await api.post("/api/v1/sources", headers=AUTH, json={"name": "wire", "priority": 9})
    ndjson = b'{"url": "http://n.example/1"}\n"http://n.example/2"\n{"link": 1}\n[1]\n{bad\n'
    result = (
        await api.post(
            "/api/v1/import?source=wire",
            content=ndjson,
            headers={**AUTH, "Content-Type": "application/x-ndjson"},
        )
    ).json()
    assert (result["accepted"], result["duplicate"], result["rejected"]) == (2, 0, 3)
    assert [e["line"] for e in result["errors"]] == [3, 4, 5]
    wire = await db.fetchval(
        "SELECT count(*) FROM url_frontier u JOIN sources s "
        "ON s.id = u.source_id WHERE s.name = 'wire'"
    )
    assert wire == 2

    body = {
        "source": "wire",
        "urls": [
            "http://j.example/1",
            42,
            {"url": "x"},
            ["y"],
            "http://j.example/1",
            "http://n.example/1",
            "nope",
        ],
    }
    result = (await api.post("/api/v1/import", headers=AUTH, json=body)).json()
    assert (result["accepted"], result["duplicate"], result["rejected"]) == (1, 2, 4)
    assert [e["line"] for e in result["errors"]] == [2, 3, 4, 7]
    assert (
        await db.fetchval("SELECT priority FROM url_frontier WHERE url = 'http://j.example/1'") == 9
    )


async def test_import_json_takes_its_keys_in_any_order_and_writes_nothing_when_bad(
    api: httpx.AsyncClient, db: Database
) -> None:
    """`{"urls": [...], "source": "X"}`: the URLs go to X (they went to manual, then the
    answer was 422). A body bad at its end writes none of the URLs before it."""
    await api.post("/api/v1/sources", headers=AUTH, json={"name": "wire", "priority": 9})
    json_headers = {**AUTH, "Content-Type": "application/json"}
    urls = [f"http://order.example/{i}" for i in range(3)]
    body = json.dumps({"urls": urls, "source": "wire"}).encode()
    response = await api.post("/api/v1/import", headers=json_headers, content=body)
    assert response.status_code == 200, response.text
    assert response.json()["accepted"] == 3
    filed = await db.fetch("SELECT s.name FROM url_frontier u JOIN sources s ON s.id = u.source_id")
    assert [r["name"] for r in filed] == ["wire"] * 3

    many = [f"http://cut.example/{i}" for i in range(12_000)]  # several batches
    cut = json.dumps({"source": "wire", "urls": many}).encode()[:-2] + b", }"
    assert_error(
        await api.post("/api/v1/import", headers=json_headers, content=cut), 400, "bad_body"
    )
    assert await db.fetchval("SELECT count(*) FROM url_frontier") == 3


async def test_import_refusals(
    api: httpx.AsyncClient, db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    error = assert_error(
        await api.post("/api/v1/import?source=nope", headers=AUTH, content=b"http://a.example/\n"),
        422,
        "validation_error",
    )
    assert fields_of(error) == {"source"}
    json_headers = {**AUTH, "Content-Type": "application/json"}
    assert_error(
        await api.post("/api/v1/import", headers=json_headers, content=b'{"urls": [1,'),
        400,
        "bad_body",
    )
    assert_error(
        await api.post("/api/v1/import", headers=json_headers, content=b"[]"), 400, "bad_body"
    )
    error = assert_error(
        await api.post("/api/v1/import", headers=json_headers, content=b'{"source": "manual"}'),
        422,
        "validation_error",
    )
    assert fields_of(error) == {"urls"}
    late = json.dumps({"urls": ["http://late.example/"], "source": "other"}).encode()
    error = assert_error(
        await api.post("/api/v1/import", headers=json_headers, content=late),
        422,
        "validation_error",
    )
    assert fields_of(error) == {"source"} and "'other'" in error["message"]
    assert await db.fetchval("SELECT count(*) FROM url_frontier") == 0  # nothing written
    assert_error(
        await api.post(
            "/api/v1/import", content=b"x", headers={**AUTH, "Content-Type": "image/png"}
        ),
        415,
        "unsupported_media_type",
    )

    small = make_settings(fresh_dsn, tmp_path, api_import_max_bytes=2048)
    async with await client_for(small, db) as client:
        big = b"http://big.example/page\n" * 200
        assert_error(
            await client.post("/api/v1/import", headers=AUTH, content=big), 413, "body_too_large"
        )

        async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: caught mid-stream
            for i in range(200):
                yield f"http://big.example/{i}\n".encode()

        error = assert_error(
            await client.post("/api/v1/import", headers=AUTH, content=chunked()),
            413,
            "body_too_large",
        )
        assert "2048" in error["message"]


# -- frontier pages, stats, fetch log, metrics ----------------------------------------


async def seed_urls(db: Database, count: int) -> None:
    manual = await db.fetchval("SELECT id FROM sources WHERE name = 'manual'")
    ref = SourceRef(manual)
    await QueueRepository(db).submit(
        [Candidate(f"http://h{i % 3}.example/{i}", ref, Origin.MANUAL) for i in range(count)]
    )


async def test_frontier_keyset_pagination(api: httpx.AsyncClient, db: Database) -> None:
    await seed_urls(db, 250)
    seen: list[str] = []
    after = None
    for _ in range(10):
        params: dict[str, Any] = {"limit": 100}
        if after:
            params["after"] = after
        page = (await api.get("/api/v1/frontier", params=params)).json()
        seen.extend(item["url_hash"] for item in page["items"])
        after = page["next"]
        if after is None:
            break
    assert len(seen) == 250 and seen == sorted(seen) and len(set(seen)) == 250

    hosts = (await api.get("/api/v1/frontier", params={"host": "H1.example", "limit": 1000})).json()
    assert len(hosts["items"]) == 83 and {i["host"] for i in hosts["items"]} == {"h1.example"}
    assert hosts["next"] is None
    assert hosts["items"][0]["source_name"] == "manual"
    by_source = (
        await api.get("/api/v1/frontier", params={"source": "manual", "status": "fetched"})
    ).json()
    assert by_source == {"items": [], "next": None, "scanned": 250}
    error = assert_error(
        await api.get("/api/v1/frontier", params={"after": "zz"}), 422, "validation_error"
    )
    assert fields_of(error) == {"after"}


async def test_sparse_filters_walk_a_bounded_range_and_continue(db: Database) -> None:
    await seed_urls(db, 300)
    views = ApiQueries(db)
    where = FrontierFilter(host="h2.example")
    found: list[str] = []
    after: str | None = None
    pages = 0
    while True:
        page = await views.frontier_page(where, after=after, limit=30, scan_budget=40)
        pages += 1
        assert page.scanned <= 40
        found.extend(item["url_hash"] for item in page.items)
        if page.next is None:
            break
        after = page.next
    assert len(found) == 100 and len(set(found)) == 100
    assert pages >= 8  # 300 rows walked at most 40 at a time


async def test_stats_fetch_log_and_metrics(api: httpx.AsyncClient, db: Database) -> None:
    await seed_urls(db, 30)
    queue = QueueRepository(db)
    claims = await queue.claim("worker-1", 2)
    assert len(claims) == 2
    log = FetchLogRepository(db)
    await log.record(
        [
            LogEntry(FetchKind.PAGE, None, f"http://h0.example/{i}", LogOutcome.OK, 200)
            for i in range(3)
        ]
        + [
            LogEntry(
                FetchKind.PAGE,
                None,
                "http://h1.example/x",
                LogOutcome.FAILED,
                503,
                error="server error",
            )
        ]
        + [LogEntry(FetchKind.FEED, None, "http://h1.example/feed", LogOutcome.OK_NO_NEW, 200)]
    )

    stats = (await api.get("/api/v1/stats")).json()
    assert stats["total"] == 30 and stats["by_status"]["fetching"] == 2
    assert stats["by_status"]["pending"] == 28 and stats["by_origin"]["manual"] == 30
    assert len(stats["throughput_last_hour"]) == 60
    last = stats["throughput_last_hour"][-1]
    assert (last["pages_ok"], last["pages_error"], last["polls"]) == (3, 1, 1)

    first = (await api.get("/api/v1/fetch-log", params={"limit": 3})).json()
    assert [row["outcome"] for row in first["items"]] == ["ok_no_new", "failed", "ok"]
    rest = (
        await api.get(
            "/api/v1/fetch-log", params={"limit": 3, "before_id": first["next_before_id"]}
        )
    ).json()
    assert len(rest["items"]) == 2 and rest["next_before_id"] is None

    response = await api.get("/metrics")
    assert response.status_code == 200
    text = response.text
    assert "frontier_claims_total 2.0" in text
    assert 'frontier_fetches_total{kind="page",outcome="ok"} 3.0' in text
    assert 'frontier_fetches_total{kind="page",outcome="failed"} 1.0' in text
    assert 'frontier_polls_total{kind="feed",outcome="ok_no_new"} 1.0' in text
    assert 'frontier_urls_submitted_total{origin="manual"} 30.0' in text
    assert 'frontier_queue_depth{status="pending"} 28.0' in text
    assert "frontier_sink_errors_total 0.0" in text
    # Scraping folds old deltas without changing the totals.
    assert "frontier_claims_total 2.0" in (await api.get("/metrics")).text


# -- manual fire (the poller's fire_source) -------------------------------------------

RSS = """<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<item><title>One</title><link>{origin}/news/1</link></item>
<item><title>Two</title><link>{origin}/news/2</link></item>
</channel></rss>"""


async def test_fire_dry_run_then_real_then_rate_limited(
    db: Database, fresh_dsn: str, tmp_path: Path, local_site: Any
) -> None:
    local_site.serve(
        "/feed.xml", RSS.format(origin=local_site.origin), content_type="application/rss+xml"
    )
    settings = make_settings(fresh_dsn, tmp_path, allow_private_networks=True)
    async with await client_for(settings, db) as client:
        created = await client.post(
            "/api/v1/sources",
            headers=AUTH,
            json={"name": "local", "feed_url": local_site.url("/feed.xml")},
        )
        sid = created.json()["id"]
        assert_error(await client.post(f"/api/v1/sources/{sid}/fire"), 401, "unauthorized")

        dry = await client.post(f"/api/v1/sources/{sid}/fire?dry_run=true", headers=AUTH)
        assert dry.status_code == 200, dry.text
        assert dry.json()["dry_run"] is True and len(dry.json()["entries"]) == 2
        assert await db.fetchval("SELECT count(*) FROM url_frontier") == 0

        real = await client.post(f"/api/v1/sources/{sid}/fire?dry_run=false", headers=AUTH)
        assert real.status_code == 200, real.text
        assert real.json()["items_new"] == 2
        assert await db.fetchval("SELECT count(*) FROM url_frontier") == 2

        again = await client.post(f"/api/v1/sources/{sid}/fire", headers=AUTH)
        error = assert_error(again, 429, "rate_limited")
        assert int(again.headers["Retry-After"]) >= 1 and "fired" in error["message"]

        missing = "00000000-0000-0000-0000-000000000000"
        assert_error(
            await client.post(f"/api/v1/sources/{missing}/fire", headers=AUTH), 404, "not_found"
        )


async def test_fire_without_a_fire_function_answers_501(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    settings = make_settings(fresh_dsn, tmp_path)
    async with await client_for(settings, db, with_fire=False) as client:
        created = await client.post(
            "/api/v1/sources",
            headers=AUTH,
            json={"name": "local", "feed_url": "http://a.example/feed.xml"},
        )
        sid = created.json()["id"]
        error = assert_error(
            await client.post(f"/api/v1/sources/{sid}/fire", headers=AUTH), 501, "not_implemented"
        )
        assert "cannot fire sources" in error["message"]
        assert await db.fetchval("SELECT count(*) FROM url_frontier") == 0


async def test_metrics_count_hosts_held_back_by_politeness_per_reason(
    api: httpx.AsyncClient, db: Database
) -> None:
    queue = QueueRepository(db)
    ref = SourceRef(None)
    names = ("busy", "slow", "wall", "shared")
    urls = [f"http://{h}.example/{i}" for h in names for i in range(2)]
    await queue.submit([Candidate(u, ref, Origin.MANUAL) for u in urls])
    claims = await queue.claim("w1", 10)
    assert len(claims) == 4  # one per host, each host held by w1 (a delay of 1 s)
    hosts = HostRepository(db)
    answered = [c for c in claims if c.host != "busy.example"]  # their answers are in
    await hosts.release_slots(
        {c.host: claim_hold("w1", c.url_hash) for c in answered},
        # nothing sent: another host of its politeness key had a request in flight
        snoozed={"shared.example": KeyBusy("example", 30.0)},
    )
    await db.execute(
        "UPDATE host_state SET backoff_until = now() + interval '1 hour' WHERE host = $1",
        "wall.example",
    )
    text = (await api.get("/metrics")).text
    for reason in ("busy", "key_busy", "delay", "backoff"):
        assert f'frontier_politeness_held_hosts{{reason="{reason}"}} 1.0' in text, text
        assert f'frontier_politeness_held_urls{{reason="{reason}"}} 1.0' in text
    assert 'frontier_politeness_wait_seconds{reason="busy"}' in text


async def test_the_outbox_backlog_shows_on_metrics_and_the_dashboard(
    api: httpx.AsyncClient, db: Database
) -> None:
    from frontier.clock import utcnow
    from frontier.outbox import OutboxRepository
    from tests.integration.test_outbox import raw

    outbox = OutboxRepository(db)
    await outbox.enqueue_documents(["hook"], [raw(1), raw(2)])
    rows = await outbox.claim("hook", "w", 1, lease_s=60)
    await outbox.failed([r.id for r in rows], "w", utcnow(), "HTTP 503", None)
    text = (await api.get("/metrics")).text
    assert 'frontier_sink_backlog{sink="hook"} 2.0' in text
    assert 'frontier_sink_oldest_pending_seconds{sink="hook"}' in text
    page = (await api.get("/")).text
    panel = page.split('data-testid="sinks"', 1)[1].split("</section>", 1)[0]
    assert "<td>hook</td><td>removed</td>" in panel  # not in this API's configuration
    assert "HTTP 503" in panel and "<td>postgres</td><td>required</td>" in panel
