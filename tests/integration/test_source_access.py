"""Per-source credentials, headers and cookies (issue 32 item 4) at real servers: basic
auth and a cookie reach the source's own origin (127.0.0.1) and not the host a redirect
sends the request to (127.0.0.2), through the poller, the fetcher and the spider; a bearer
token; secrets by reference only (a clear one is refused, by the schema, the API and the
CLI); what the API and the CLI show holds the references, never a secret."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fetcher.config import FetcherConfig
from fetcher.worker import Fetcher
from frontier.db import Database
from frontier.queue import QueueRepository
from frontier.queue_values import Candidate, QueuePolicy
from frontier.safe_http.client import MASK, SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.safe_http.responses import Exchange
from frontier.settings import Settings
from frontier.sinks.postgres import PostgresSink
from frontier.source_credentials import credentials_of
from frontier.source_export import to_yaml
from frontier.source_schema import InvalidSource, parse_config
from frontier.source_specs import parse_yaml
from frontier.sources import SourceRepository
from frontier.states import Origin
from poller.policy import PollPolicy
from poller.poll_summary import PollSummary
from poller.scheduler import Poller
from spider.service import crawl_in_child, job_for
from tests.fetch_harness import UA, article, frontier_row
from tests.integration.test_api import AUTH, client_for, make_settings
from tests.integration.test_poll import rss
from tests.integration.test_sources_manage import frontier
from tests.local_site import LocalSite

T0 = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)
PASSWORD = "s3cret-Pa55word-never-shown"
SESSION = "session-cookie-value-never-shown"
TOKEN = "bearer-token-never-shown-0123456789"
BASIC = "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
ACCESS = {
    "username": "alice",
    "password_env": "TEST_WIKI_PASSWORD",
    "headers": {"X-Tenant": "newsroom"},
    "cookies": {"session": {"file": "/placeholder"}},  # set per test (tmp_path)
}
CLIENT = HttpLimits(UA, allow_private_networks=True)


@pytest.fixture
def secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """ACCESS with its secrets in the environment and in a file."""
    monkeypatch.setenv("TEST_WIKI_PASSWORD", PASSWORD)
    monkeypatch.setenv("TEST_WIKI_TOKEN", TOKEN)
    cookie = tmp_path / "session"
    cookie.write_text(SESSION + "\n")
    return {**ACCESS, "cookies": {"session": {"file": str(cookie)}}}


def carried(headers: Mapping[str, str]) -> dict[str, str | None]:
    return {name: headers.get(name) for name in ("Authorization", "Cookie", "X-Tenant")}


OWN = {"Authorization": BASIC, "Cookie": f"session={SESSION}", "X-Tenant": "newsroom"}
NONE = dict.fromkeys(OWN)


async def add(db: Database, name: str, **values: Any) -> Any:
    return await SourceRepository(db).create(parse_config({"name": name, **values}))


async def test_the_poller_sends_them_to_the_feeds_host_and_not_across_a_redirect(
    db: Database, secrets: dict[str, Any], local_site: LocalSite, partner_site: LocalSite
) -> None:
    local_site.serve("/feed.xml", rss(local_site.url("/p/1")), content_type="application/rss+xml")
    local_site.redirect("/moved.xml", partner_site.url("/feed.xml"))
    partner_site.serve(
        "/feed.xml", rss(partner_site.url("/p/1")), content_type="application/rss+xml"
    )
    await add(db, "wiki", feed_url=local_site.url("/feed.xml"), access=secrets)
    await add(db, "moved", feed_url=local_site.url("/moved.xml"), access=secrets)
    async with SafeClient(CLIENT) as client:
        summaries = await Poller(db, client, PollPolicy(concurrency=4, lease_s=60)).run_once(now=T0)

    assert all(s.ok for s in summaries), [s.error for s in summaries]
    assert [carried(seen.headers) for seen in local_site.hits("/feed.xml")] == [OWN]
    assert [carried(seen.headers) for seen in local_site.hits("/moved.xml")] == [OWN]
    assert [carried(seen.headers) for seen in partner_site.hits("/feed.xml")] == [NONE]


async def poll_with_token(db: Database, site: LocalSite, variable: str) -> PollSummary:
    """Poll a feed on `site` whose source's bearer token is read from `variable`."""
    site.serve("/feed.xml", rss(site.url("/p/1")), content_type="application/rss+xml")
    await add(db, "api", feed_url=site.url("/feed.xml"), access={"token_env": variable})
    async with SafeClient(CLIENT) as client:
        summaries = await Poller(db, client, PollPolicy(lease_s=60)).run_once(now=T0)
    return summaries[0]


async def test_a_bearer_token_from_a_variable(
    db: Database, secrets: dict[str, Any], local_site: LocalSite
) -> None:
    assert (await poll_with_token(db, local_site, "TEST_WIKI_TOKEN")).ok
    assert local_site.hits("/feed.xml")[0].headers.get("Authorization") == f"Bearer {TOKEN}"


async def test_an_unset_variable_is_the_sources_error_naming_it(
    db: Database, local_site: LocalSite
) -> None:
    summary = await poll_with_token(db, local_site, "TEST_UNSET_TOKEN")
    assert not summary.ok and "TEST_UNSET_TOKEN is not set" in (summary.error or "")
    assert local_site.requests == []


async def test_the_fetcher_sends_them_to_the_sources_origin_only(
    db: Database, secrets: dict[str, Any], local_site: LocalSite, partner_site: LocalSite
) -> None:
    for site in (local_site, partner_site):
        site.serve("/robots.txt", "", status=404)
    local_site.serve("/story", article("members only"))
    local_site.redirect("/old", partner_site.url("/story"))
    partner_site.serve("/story", article("elsewhere"))
    source = await add(db, "wiki", base_url=local_site.url("/"), access=secrets)
    await QueueRepository(db).submit(
        [Candidate(local_site.url(path), source.ref, Origin.MANUAL) for path in ("/story", "/old")]
    )
    config = FetcherConfig(user_agent=UA, worker_id="w-access", concurrency=4)
    async with SafeClient(CLIENT) as client:
        fetcher = Fetcher(db, client, PostgresSink(db), config, QueuePolicy(default_delay_ms=0))
        await fetcher.run(until_idle=True)

    assert (await frontier_row(db, local_site.url("/story")))["status"] == "fetched"
    assert (await frontier_row(db, partner_site.url("/story")))["status"] == "fetched"
    assert [carried(s.headers) for s in local_site.hits("/story")] == [OWN]
    assert [carried(s.headers) for s in local_site.hits("/old")] == [OWN]
    assert [carried(s.headers) for s in partner_site.hits("/story")] == [NONE]


async def test_the_spider_sends_them_to_the_sources_origin_only(
    db: Database,
    settings: Settings,
    fresh_dsn: str,
    secrets: dict[str, Any],
    local_site: LocalSite,
    partner_site: LocalSite,
) -> None:
    local_site.serve("/robots.txt", "", status=404)
    local_site.serve(
        "/", '<html><body><a href="/2024/01/01/a">a</a> <a href="/section">s</a></body></html>'
    )
    local_site.serve("/2024/01/01/a", article("a"))
    local_site.redirect("/section", partner_site.url("/section"))
    partner_site.serve("/robots.txt", "", status=404)
    partner_site.serve("/section", "<html><body>elsewhere</body></html>")
    await add(
        db,
        "wiki",
        base_url=local_site.url("/"),
        ingestion_mode="spider",
        rate_limit_ms=0,
        article_url_patterns=[r"/\d{4}/\d{2}/\d{2}/"],
        access=secrets,
    )
    result = await crawl_in_child(job_for(settings, fresh_dsn, "wiki"))

    assert result.exit_code == 0 and result.summary.pages_crawled >= 1, result.summary
    assert local_site.hits("/") and all(carried(s.headers) == OWN for s in local_site.requests)
    assert local_site.hits("/section")
    assert partner_site.requests, "the redirect was not followed"
    assert all(carried(s.headers) == NONE for s in partner_site.requests)


@pytest.mark.parametrize(
    ("access", "said"),
    [
        ({"username": "alice", "password": PASSWORD}, "password: a secret is never stored"),
        ({"token": TOKEN}, "token: a secret is never stored"),
        ({"cookies": {"session": SESSION}}, "cookies.session: a secret is never stored"),
        ({"headers": {"X-Api-Key": TOKEN}}, "headers.X-Api-Key: its name says it carries"),
        ({"headers": {"Authorization": f"Bearer {TOKEN}"}}, "headers.Authorization"),
        ({"password_env": "P"}, "need both a username and a password"),
        ({"username": "a", "password_env": "P", "token_env": "T"}, "not both"),
        ({"cookies": {"s": {"env": "A", "file": "/b"}}}, "exactly one of env or file"),
        ({"password_file": "relative/path", "username": "a"}, "password_file"),
        # not mappings: refused by validation, not a crash (a 500 through the API)
        ({"cookies": [None, None]}, "cookies"),
        ({"headers": "X-A: b"}, "headers"),
    ],
)
def test_a_clear_secret_or_an_inconsistent_access_is_refused(
    access: dict[str, Any], said: str
) -> None:
    with pytest.raises(InvalidSource) as caught:
        parse_config({"name": "wiki", "feed_url": "https://wiki.example/feed", "access": access})
    message = str(caught.value)
    assert said in message
    assert PASSWORD not in message and TOKEN not in message and SESSION not in message


async def test_the_api_refuses_a_clear_secret_and_shows_references_only(
    db: Database, fresh_dsn: str, tmp_path: Path, secrets: dict[str, Any]
) -> None:
    async with await client_for(make_settings(fresh_dsn, tmp_path), db) as api:
        refused = await api.post(
            "/api/v1/sources",
            headers=AUTH,
            json={"name": "wiki", "access": {"username": "alice", "password": PASSWORD}},
        )
        created = await api.post(
            "/api/v1/sources",
            headers=AUTH,
            json={"name": "wiki", "feed_url": "https://wiki.example/feed", "access": secrets},
        )
        shown = await api.get(f"/api/v1/sources/{created.json()['id']}", headers=AUTH)

    assert refused.status_code == 422 and PASSWORD not in refused.text
    assert "a secret is never stored in clear" in refused.text
    assert created.status_code == 201, created.text
    assert shown.json()["access"] == secrets  # the references, as given
    for text in (created.text, shown.text):
        assert PASSWORD not in text and SESSION not in text


def test_the_cli_refuses_a_clear_secret_and_shows_references_only(
    fresh_dsn: str, secrets: dict[str, Any]
) -> None:
    add = ("sources", "add", "wiki", "--feed-url", "https://w.example/f", "--access")
    refused = frontier(*add, json.dumps({"token": TOKEN}), dsn=fresh_dsn)
    added = frontier(*add, json.dumps(secrets), dsn=fresh_dsn)
    shown = frontier("sources", "show", "wiki", "--json", dsn=fresh_dsn)
    listed = frontier("sources", "list", "--json", dsn=fresh_dsn)

    assert refused.returncode != 0 and "token: a secret is never stored" in refused.stderr
    assert TOKEN not in refused.stdout + refused.stderr
    assert added.returncode == 0, added.stderr
    assert json.loads(shown.stdout)["access"] == secrets
    assert [s["access"] for s in json.loads(listed.stdout) if s["name"] == "wiki"] == [secrets]
    for result in (added, shown, listed):
        assert PASSWORD not in result.stdout + result.stderr
        assert SESSION not in result.stdout + result.stderr


def test_a_yaml_spec_with_a_clear_secret_is_refused_and_the_export_keeps_references() -> None:
    spec = f"""
sources:
  - name: clear
    feed_url: https://wiki.example/feed.xml
    access: {{username: alice, password: {PASSWORD}}}
  - name: referenced
    feed_url: https://wiki.example/feed.xml
    access: {{username: alice, password_file: /run/secrets/wiki}}
"""
    parsed = parse_yaml(spec.encode())

    assert [(e.entry, e.name) for e in parsed.errors] == [(1, "clear")]
    assert "password: a secret is never stored in clear" in parsed.errors[0].reason
    assert PASSWORD not in parsed.errors[0].reason
    ((_, config),) = parsed.specs
    exported = to_yaml([config.values()])
    assert "password_file: /run/secrets/wiki" in exported and PASSWORD not in exported


async def test_the_archive_keeps_that_they_were_sent_not_the_secrets(
    secrets: dict[str, Any], local_site: LocalSite
) -> None:
    local_site.serve("/page", "members only")
    credentials = credentials_of(secrets, [local_site.url("/")])
    exchanges: list[Exchange] = []
    async with SafeClient(CLIENT) as client:
        await client.get(local_site.url("/page"), credentials=credentials, exchanges=exchanges)

    assert carried(local_site.hits("/page")[0].headers) == OWN
    archived = dict(exchanges[0].request_headers)
    assert archived["Authorization"] == archived["Cookie"] == archived["X-Tenant"] == MASK
    assert PASSWORD not in repr(exchanges) and SESSION not in repr(exchanges)
