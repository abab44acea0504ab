"""Reads behind FRONTIER_API_READ_AUTH: the read-only token, the browser login (a signed
session cookie, never the token), CSRF on the dashboard's forms, and /metrics (latency
histograms, queue lag, hosts backing off, failing sources, process metrics) against a
real PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from frontier.api.app import create_app
from frontier.api.metrics import read_snapshot
from frontier.api.queries import ApiQueries
from frontier.api.sessions import COOKIE
from frontier.db import Database
from frontier.fetch_log import FetchLogRepository, LogEntry
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, SourceRef
from frontier.settings import Settings
from frontier.source_schema import parse_config
from frontier.sources import SourceRepository
from frontier.states import FetchKind, LogOutcome, Origin

WRITE = "write-secret-token-0123456789abcdef"
READ = "read-only-token-0123456789abcdef0"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
HTML = {"Accept": "text/html,application/xhtml+xml"}


def settings_for(dsn: str, home: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": dsn,
        "home": home,
        "api_token": WRITE,
        "api_read_token": READ,
        "api_read_auth": True,
    }
    values.update(overrides)
    return Settings.load(**values, _env_file=None)


@pytest.fixture
async def api(db: Database, fresh_dsn: str, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings_for(fresh_dsn, tmp_path), db)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def csrf_of(page: httpx.Response) -> str:
    """The CSRF token of a dashboard page's forms."""
    return page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]


async def log_in(api: httpx.AsyncClient, token: str) -> httpx.Response:
    return await api.post("/login", content=f"token={token}&next=/", headers=FORM)


async def test_a_json_client_gets_401_with_a_challenge(api: httpx.AsyncClient) -> None:
    for path in ("/api/v1/stats", "/metrics", "/"):
        response = await api.get(path)
        assert response.status_code == 401, path
        assert response.headers["WWW-Authenticate"] == "Bearer"
        assert response.json()["error"]["code"] == "unauthorized"


async def test_the_read_token_reads_but_never_writes(api: httpx.AsyncClient) -> None:
    assert (await api.get("/api/v1/stats", headers=bearer(READ))).status_code == 200
    assert (await api.get("/metrics", headers=bearer(READ))).status_code == 200
    assert (await api.get("/", headers=bearer(READ))).status_code == 200
    refused = await api.post(
        "/api/v1/sources",
        json={"name": "x", "feed_url": "https://x.example/rss"},
        headers=bearer(READ),
    )
    assert refused.status_code == 401
    assert "FRONTIER_API_READ_TOKEN" in refused.json()["error"]["message"]
    assert (await api.get("/api/v1/stats", headers=bearer("guess"))).status_code == 401
    assert (await api.get("/api/v1/stats", headers=bearer(WRITE))).status_code == 200


async def test_a_browser_is_sent_to_the_login_form_and_back(api: httpx.AsyncClient) -> None:
    response = await api.get("/sources/x?y=1", headers=HTML)
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=%2Fsources%2Fx%3Fy%3D1"
    form = await api.get(response.headers["location"])
    assert form.status_code == 200 and 'data-testid="login-form"' in form.text
    assert 'value="/sources/x?y=1"' in form.text


async def test_login_sets_a_signed_cookie_that_is_not_the_token(api: httpx.AsyncClient) -> None:
    wrong = await log_in(api, "guess")
    assert wrong.status_code == 401 and "not the read or the write token" in wrong.text
    assert COOKIE not in wrong.cookies
    response = await log_in(api, READ)
    assert response.status_code == 303 and response.headers["location"] == "/"
    header = response.headers["set-cookie"]
    assert "HttpOnly" in header and "SameSite=strict" in header and "Max-Age=43200" in header
    assert "Secure" not in header  # plain http here; https sets it (below)
    value = response.cookies[COOKIE]
    assert READ not in value and WRITE not in value and value.startswith("read.")
    page = await api.get("/", headers=HTML)
    assert page.status_code == 200 and "logged in (read)" in page.text
    assert 'data-testid="fire-' not in page.text  # a read session has no actions
    # an edited role fails the signature: a read session cannot become a write one
    api.cookies.set(COOKIE, "write." + value.split(".", 1)[1])
    assert (await api.get("/api/v1/stats")).status_code == 401


async def test_the_cookie_is_secure_over_https(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    app = create_app(settings_for(fresh_dsn, tmp_path), db)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://test") as client:
        response = await log_in(client, WRITE)
    assert "Secure" in response.headers["set-cookie"]


async def test_an_expired_or_foreign_session_is_refused(
    db: Database, fresh_dsn: str, tmp_path: Path, api: httpx.AsyncClient
) -> None:
    from frontier.api.sessions import issue

    api.cookies.set(COOKIE, issue("read", READ, now=0, lifetime_s=60))  # expired in 1970
    assert (await api.get("/api/v1/stats")).status_code == 401
    api.cookies.set(COOKIE, issue("read", "another server's token", now=1e10, lifetime_s=60))
    assert (await api.get("/api/v1/stats")).status_code == 401


async def test_the_login_never_redirects_off_the_server(api: httpx.AsyncClient) -> None:
    for target in ("https://evil.example/", "//evil.example/", "/\\evil.example"):
        response = await api.post("/login", content=f"token={READ}&next={target}", headers=FORM)
        assert response.headers["location"] == "/", target


async def test_dashboard_actions_need_the_write_session_and_its_csrf_token(
    db: Database, api: httpx.AsyncClient
) -> None:
    source = await SourceRepository(db).create(
        parse_config({"name": "wire", "feed_url": "https://wire.example/rss"})
    )
    await log_in(api, READ)
    denied = await api.post("/actions/sources/wire/disable", content="csrf=x", headers=FORM)
    assert denied.status_code == 401
    api.cookies.clear()
    await log_in(api, WRITE)
    page = await api.get("/", headers=HTML)
    assert 'data-testid="disable-wire"' in page.text
    csrf = csrf_of(page)
    no_token = await api.post("/actions/sources/wire/disable", content="next=/", headers=FORM)
    assert no_token.status_code == 403
    forged = await api.post("/actions/sources/wire/disable", content="csrf=0" * 3, headers=FORM)
    assert forged.status_code == 403
    assert (await SourceRepository(db).get_by_id(source.id)).enabled is True
    done = await api.post(
        "/actions/sources/wire/disable", content=f"csrf={csrf}&next=/", headers=FORM
    )
    assert done.status_code == 303
    assert done.headers["location"].startswith("/?notice=wire%3A%20disabled&sig=")
    shown = await api.get(done.headers["location"], headers=HTML)
    assert '<p class="notice" data-testid="notice">wire: disabled</p>' in shown.text
    assert (await SourceRepository(db).get_by_id(source.id)).enabled is False
    await api.post("/actions/sources/wire/enable", content=f"csrf={csrf}", headers=FORM)
    assert (await SourceRepository(db).get_by_id(source.id)).enabled is True
    out = await api.post("/logout", content=f"csrf={csrf}", headers=FORM)
    assert out.status_code == 303 and COOKIE in out.headers["set-cookie"]


async def test_reads_without_read_auth_stay_open(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    app = create_app(settings_for(fresh_dsn, tmp_path, api_read_auth=False), db)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        assert (await client.get("/", headers=HTML)).status_code == 200
        assert (await client.get("/metrics")).status_code == 200
        # the actions still need the write session
        response = await client.post("/actions/sources/x/fire", content="csrf=1", headers=FORM)
        assert response.status_code == 401


async def test_metrics_histograms_lag_backoff_failing_and_process(
    db: Database, api: httpx.AsyncClient
) -> None:
    news = await SourceRepository(db).create(
        parse_config({"name": "news", "feed_url": "https://news.example/rss"})
    )
    await db.execute(
        "UPDATE feed_state SET consecutive_errors = 2, last_error = 'DNS lookup failed' "
        "WHERE source_id = $1",
        news.id,
    )
    await QueueRepository(db).submit(
        [Candidate("https://slow.example/a", SourceRef(news.id, 5), Origin.FEED)]
    )
    await db.execute(
        "UPDATE host_state SET backoff_until = now() + interval '1 hour', "
        "pending_due_at = now() - interval '90 seconds'"
    )
    await FetchLogRepository(db).record(
        [
            LogEntry(
                FetchKind.PAGE, news.id, "https://slow.example/a", LogOutcome.OK, 200, elapsed_ms=40
            ),
            LogEntry(
                FetchKind.PAGE,
                news.id,
                "https://slow.example/b",
                LogOutcome.OK,
                200,
                elapsed_ms=700,
            ),
            LogEntry(
                FetchKind.FEED,
                news.id,
                "https://news.example/rss",
                LogOutcome.FAILED,
                elapsed_ms=60_000,
                error="timed out",
            ),
        ]
    )
    text = (await api.get("/metrics", headers=bearer(READ))).text
    assert 'frontier_fetch_duration_seconds_bucket{kind="page",le="0.05"} 1.0' in text
    assert 'frontier_fetch_duration_seconds_bucket{kind="page",le="1.0"} 2.0' in text
    assert 'frontier_fetch_duration_seconds_count{kind="page"} 2.0' in text
    assert 'frontier_fetch_duration_seconds_sum{kind="page"} 0.74' in text
    assert 'frontier_poll_duration_seconds_bucket{kind="feed",le="30.0"} 0.0' in text
    assert 'frontier_poll_duration_seconds_bucket{kind="feed",le="+Inf"} 1.0' in text
    assert "frontier_hosts_backing_off 1.0" in text
    assert "frontier_sources_failing 1.0" in text
    assert "process_cpu_seconds_total" in text
    lag = next(line for line in text.splitlines() if line.startswith("frontier_queue_lag_seconds"))
    assert float(lag.split()[1]) >= 90
    at = datetime.now(UTC) + timedelta(minutes=5)  # pinned: the lag grows with the clock
    assert (await read_snapshot(db, now=at)).queue_lag_s >= 390


async def test_a_failed_sitemap_or_spider_source_shows_its_streak_and_cause(db: Database) -> None:
    """The overview's errors column read only the feed's streak: a failing sitemap or
    spider source showed "errors 0"."""
    sources = SourceRepository(db)
    maps = await sources.create(
        parse_config({"name": "maps", "sitemap_url": "https://maps.example/sitemap.xml"})
    )
    wire = await sources.create(
        parse_config(
            {"name": "wire", "base_url": "https://wire.example/", "ingestion_mode": "spider"}
        )
    )
    await db.execute(
        "UPDATE feed_state SET sitemap_consecutive_errors = 2, "
        "sitemap_last_error = 'answered HTTP 503 (https://maps.example/sitemap.xml)' "
        "WHERE source_id = $1",
        maps.id,
    )
    await db.execute(
        "INSERT INTO spider_state (source_id, last_run_at, last_outcome) "
        "VALUES ($1, now(), 'failed')",
        wire.id,
    )
    await FetchLogRepository(db).record(
        [LogEntry(FetchKind.SPIDER, wire.id, "https://wire.example/", LogOutcome.FAILED,
                  error="robots.txt unreachable: timed out (wire.example)")]
    )  # fmt: skip
    _total, rows = await ApiQueries(db).sources_overview(10)
    shown = {r["name"]: (r["consecutive_errors"], r["last_error"]) for r in rows}
    assert shown["maps"] == (2, "answered HTTP 503 (https://maps.example/sitemap.xml)")
    assert shown["wire"] == (1, "robots.txt unreachable: timed out (wire.example)")
    assert [r["name"] for r in rows][:2] == ["maps", "wire"]  # failing ones first
    failing = {r["name"]: (r["errors"], r["cause"]) for r in await ApiQueries(db).failing_sources()}
    assert failing == {"maps": shown["maps"], "wire": shown["wire"]}


async def test_the_dashboard_shows_only_notices_the_server_signed(
    api: httpx.AsyncClient,
) -> None:
    """`?notice=` showed any text a link carried on the dashboard, under the server's name
    (issue 35); a notice is shown only with the server's signature of that very text."""
    await log_in(api, WRITE)
    bait = "Your session expired: log in again at https://evil.example/login"
    for query in (
        {"notice": bait},
        {"notice": bait, "sig": "0" * 64},
    ):
        page = await api.get("/", params=query, headers=HTML)
        assert page.status_code == 200
        assert "evil.example" not in page.text
        assert 'data-testid="notice"' not in page.text


async def test_the_session_cookie_is_secure_when_configured_behind_any_proxy(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    """Behind a TLS proxy that is not on 127.0.0.1 (compose: Docker's network) the request
    reaches the API as http and the cookie was never Secure (issue 35);
    FRONTIER_API_SECURE_COOKIES makes it always Secure."""
    for secure in (False, True):
        app = create_app(settings_for(fresh_dsn, tmp_path, api_secure_cookies=secure), db)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as api:
            cookie = (await log_in(api, WRITE)).headers["set-cookie"]
        assert ("; secure" in cookie.lower()) is secure, cookie


def test_forwarded_headers_are_believed_from_the_trusted_proxies_only(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    from frontier.api.server import uvicorn_config

    settings = settings_for(fresh_dsn, tmp_path, api_trusted_proxies="10.0.0.5,10.0.0.6")
    config = uvicorn_config(create_app(settings, db), settings)
    assert config.proxy_headers is True
    assert config.forwarded_allow_ips == "10.0.0.5,10.0.0.6"


async def test_logging_out_ends_the_session_on_the_server(
    db: Database, api: httpx.AsyncClient
) -> None:
    """Logging out only deleted the cookie from the browser: the same value, replayed,
    still read and acted (issue 35). The session now ends on the server."""
    await SourceRepository(db).create(
        parse_config({"name": "wire", "feed_url": "https://wire.example/rss"})
    )
    value = (await log_in(api, WRITE)).cookies[COOKIE]
    page = await api.get("/", headers=HTML)
    csrf = csrf_of(page)
    assert (await api.get("/api/v1/stats")).status_code == 200
    out = await api.post("/logout", content=f"csrf={csrf}", headers=FORM)
    assert out.status_code == 303
    api.cookies.set(COOKIE, value)  # the stolen or kept cookie, replayed
    assert (await api.get("/api/v1/stats")).status_code == 401
    again = await api.get("/", headers=HTML)
    assert again.status_code == 303 and again.headers["location"].startswith("/login")
    acted = await api.post(
        "/actions/sources/wire/disable", content=f"csrf={csrf}&next=/", headers=FORM
    )
    assert acted.status_code == 401
    assert (await SourceRepository(db).get("wire")).enabled is True


async def test_a_signed_cookie_the_server_never_opened_is_refused(
    db: Database, api: httpx.AsyncClient
) -> None:
    """A cookie acts only while the server holds its session; expired ones are pruned at
    the next login."""
    from frontier.api.sessions import issue

    api.cookies.set(COOKIE, issue("read", READ, now=1e10, lifetime_s=60))
    assert (await api.get("/api/v1/stats")).status_code == 401
    await db.execute(
        "INSERT INTO api_sessions (id, role, expires_at) "
        "VALUES ('stale', 'read', now() - interval '1 second')"
    )
    api.cookies.clear()
    await log_in(api, READ)
    assert await db.fetchval("SELECT array_agg(id = 'stale') FROM api_sessions") == [False]


async def test_wrong_tokens_are_throttled_per_client_address(
    db: Database, fresh_dsn: str, tmp_path: Path
) -> None:
    """200 wrong logins in a second were each answered 401 (issue 35): after 5 wrong tokens
    from one address in a minute, by the login form or as a bearer token, that address
    gets 429 with Retry-After, even with the right token; other addresses are not held."""
    app = create_app(settings_for(fresh_dsn, tmp_path), db)

    def client_at(address: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=(address, 40000))
        return httpx.AsyncClient(transport=transport, base_url="http://test")

    async with client_at("10.0.0.7") as guesser, client_at("10.0.0.8") as other:
        for _ in range(3):
            assert (await log_in(guesser, "guess")).status_code == 401
        for _ in range(2):
            wrong = await guesser.get("/api/v1/stats", headers=bearer("guess"))
            assert wrong.status_code == 401
        held = await log_in(guesser, WRITE)
        assert held.status_code == 429 and COOKIE not in held.cookies
        assert 0 < int(held.headers["Retry-After"]) <= 60
        assert "too many wrong tokens" in held.text
        refused = await guesser.get("/api/v1/stats", headers=bearer(READ))
        assert refused.status_code == 429 and refused.json()["error"]["code"] == "rate_limited"
        assert 0 < int(refused.headers["Retry-After"]) <= 60
        assert (await log_in(other, WRITE)).status_code == 303
        assert (await other.get("/api/v1/stats", headers=bearer(READ))).status_code == 200
