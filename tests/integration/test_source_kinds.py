"""Source kinds as plugins and the feed collector's last behaviours, against the real
PostgreSQL and loopback servers: the WordPress REST kind, the sitemap kind, a third-party
kind installed through the `frontier.source_kinds` entry-point group, a kind that is not
installed, the per-source timeout, in-poll retries, fetch protection's host header, a 200
with the stored validators, the random-k filter and the dates of undated entries."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from aiohttp import web

from frontier.api.app import create_app
from frontier.db import Database
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.settings import Settings
from frontier.source_kinds import KindRegistry, load_kinds
from frontier.source_schema import InvalidSource, parse_config, parse_patch
from frontier.source_specs import import_specs, parse_specs
from frontier.sources import Source, SourceRepository
from poller.fire import fire_source
from poller.kinds import Retry
from poller.policy import PollPolicy
from poller.scheduler import Poller
from poller.sitemap_walk import MAX_DEPTH
from tests.local_site import LocalSite
from tests.processes import clean_env, frontier_output
from tests.watched_pool import watching

T0 = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)
PLUGIN = Path(__file__).resolve().parents[1] / "plugin_kind"
TOKEN = "test-token-0123456789abcdef0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


class Sleeps:
    """The in-poll backoff, recorded instead of slept."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def policy(sleeps: Sleeps) -> PollPolicy:
    return PollPolicy(
        concurrency=4, lease_s=60, retry=Retry(attempts=3, backoff_s=1.5, sleep=sleeps)
    )


@pytest.fixture
async def client() -> AsyncIterator[SafeClient]:
    async with SafeClient(HttpLimits("frontier-test/1", allow_private_networks=True)) as c:
        yield c


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> KindRegistry:
    """The test plugin installed: its folder (package + .dist-info) on sys.path."""
    monkeypatch.syspath_prepend(str(PLUGIN))
    return load_kinds()


def rss(*items: tuple[str, str | None]) -> str:
    """RSS items (link, pubDate or None)."""
    body = "".join(
        f"<item><title>Story {n}</title><link>{link}</link>"
        + (f"<pubDate>{date}</pubDate>" if date else "")
        + "</item>"
        for n, (link, date) in enumerate(items)
    )
    return (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>{body}</channel></rss>'
    )


DATED = "Sun, 01 Mar 2026 08:00:00 GMT"


async def create(db: Database, values: dict[str, Any], kinds: KindRegistry | None = None) -> Source:
    return await SourceRepository(db).create(parse_config(values, kinds=kinds))


async def frontier_rows(db: Database) -> dict[str, dict[str, Any]]:
    rows = await db.fetch("SELECT url, origin, discovery_meta FROM url_frontier")
    return {r["url"]: dict(r) for r in rows}


async def feed_state(db: Database, source: Source) -> dict[str, Any]:
    record = await db.fetchrow("SELECT * FROM feed_state WHERE source_id = $1", source.id)
    assert record is not None
    return dict(record)


async def log_rows(db: Database, source: Source) -> list[tuple[str, str, int | None]]:
    rows = await db.fetch(
        "SELECT kind, outcome, http_status FROM fetch_log WHERE source_id = $1 ORDER BY at",
        source.id,
    )
    return [(r["kind"], r["outcome"], r["http_status"]) for r in rows]


# -- the WordPress REST kind -------------------------------------------------------------


def wp_post(site: LocalSite, n: int, *, embed: bool) -> dict[str, Any]:
    """One post as WordPress's /wp/v2/posts serves it (dates in UTC without a zone)."""
    post: dict[str, Any] = {
        "id": n,
        "date": f"2030-02-2{n}T14:00:00",
        "date_gmt": f"2030-02-2{n}T13:00:00",
        "modified_gmt": f"2030-02-2{n}T15:30:00",
        "link": site.url(f"/2030/02/story-{n}/"),
        "title": {"rendered": f"Story {n} &#8211; the harbour"},
        "excerpt": {"rendered": f"<p>Excerpt of story {n} [&hellip;]</p>\n"},
        "content": {"rendered": f"<p>Full text of story {n}.</p>"},
        "author": 7,
        "featured_media": 90 + n,
    }
    if embed:
        post["_embedded"] = {
            "author": [{"id": 7, "name": "Ada Reporter"}],
            "wp:featuredmedia": [{"id": 90 + n, "source_url": f"/wp-content/uploads/{n}.jpg"}],
        }
    return post


def serve_wordpress(site: LocalSite, posts: int, per_page: int) -> None:
    """`/wp-json/wp/v2/posts` with WordPress's paging: X-WP-Total, X-WP-TotalPages, a 400
    `rest_post_invalid_page_number` past the last page; `_embed` inlines author and media."""

    async def handler(request: web.Request) -> web.Response:
        size = int(request.query.get("per_page", "10"))
        page = int(request.query.get("page", "1"))
        pages = max(1, -(-posts // size))
        if page > pages:
            return web.json_response(
                {"code": "rest_post_invalid_page_number", "data": {"status": 400}}, status=400
            )
        numbers = range(posts - (page - 1) * size, max(0, posts - page * size), -1)
        body = [wp_post(site, n, embed="_embed" in request.query) for n in numbers]
        return web.json_response(
            body, headers={"X-WP-Total": str(posts), "X-WP-TotalPages": str(pages)}
        )

    site.route("/wp-json/wp/v2/posts", handler)
    assert per_page > 0


async def test_a_wordpress_source_submits_its_posts_with_their_metadata(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy
) -> None:
    serve_wordpress(local_site, posts=5, per_page=3)
    source = await create(
        db,
        {
            "name": "harbour wp",
            "base_url": local_site.url("/"),
            "kind": "wordpress",
            "config": {"per_page": 3, "max_pages": 4},
        },
    )

    summaries = await Poller(db, client, policy).run_once(now=T0)

    assert [(s.ok, s.items_seen, s.items_new) for s in summaries] == [(True, 5, 5)]
    asked = [s.path for s in local_site.requests]
    assert asked == [
        "/wp-json/wp/v2/posts?per_page=3&_embed=",
        "/wp-json/wp/v2/posts?per_page=3&_embed=&page=2",
    ]  # two pages of five posts: X-WP-TotalPages says 2, so page 3 is never asked for
    rows = await frontier_rows(db)
    # identities: the trailing slash of WordPress's permalinks is dropped (URL normalisation)
    assert set(rows) == {local_site.url(f"/2030/02/story-{n}") for n in range(1, 6)}
    meta = rows[local_site.url("/2030/02/story-3")]["discovery_meta"]
    assert meta["title"] == "Story 3 \u2013 the harbour"  # &#8211; decoded
    assert meta["summary"] == "Excerpt of story 3 […]"
    assert meta["author"] == "Ada Reporter"
    assert meta["image_url"] == local_site.url("/wp-content/uploads/3.jpg")
    assert meta["published_at"] == "2030-02-23T13:00:00+00:00"  # date_gmt, not local date
    assert rows[local_site.url("/2030/02/story-3")]["origin"] == "feed"
    assert await log_rows(db, source) == [("feed", "ok", 200)]


async def test_a_wordpress_listing_is_read_in_a_parse_process(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy
) -> None:
    serve_wordpress(local_site, posts=4, per_page=2)
    await create(
        db,
        {
            "name": "wp",
            "base_url": local_site.url("/"),
            "kind": "wordpress",
            "config": {"per_page": 2, "max_pages": 2},
        },
    )
    async with watching() as parser:
        [summary] = await Poller(db, client, policy, parser=parser).run_once(now=T0)
    assert (summary.ok, summary.items_new) == (True, 4)
    # both pages' JSON and HTML: in processes of their own, the event loop turning meanwhile
    assert len(parser.pids) == 2 and os.getpid() not in parser.pids
    assert all(parser.served_during_parse)


async def test_a_wordpress_listing_that_is_not_json_fails_that_poll(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy
) -> None:
    local_site.serve("/wp-json/wp/v2/posts", "<html>maintenance</html>")
    source = await create(
        db, {"name": "broken wp", "base_url": local_site.url("/"), "kind": "wordpress"}
    )

    [summary] = await Poller(db, client, policy).run_once(now=T0)

    assert not summary.ok and "not a WordPress posts listing" in (summary.error or "")
    assert await log_rows(db, source) == [("feed", "failed", 200)]
    assert await frontier_rows(db) == {}


# -- the sitemap kind --------------------------------------------------------------------


async def test_a_sitemap_source_submits_its_locs_as_sitemap_urls(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy
) -> None:
    local_site.serve(
        "/index.xml",
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{local_site.url('/news.xml')}</loc></sitemap></sitemapindex>",
        content_type="application/xml",
    )
    local_site.serve(
        "/news.xml",
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{local_site.url('/n/1')}</loc><lastmod>2030-02-28</lastmod></url>"
        f"<url><loc>{local_site.url('/n/2')}</loc></url></urlset>",
        content_type="application/xml",
    )
    source = await create(
        db,
        {"name": "maps", "kind": "sitemap", "config": {"url": local_site.url("/index.xml")}},
    )

    [summary] = await Poller(db, client, policy).run_once(now=T0)

    assert (summary.ok, summary.items_seen, summary.items_new) == (True, 2, 2)
    rows = await frontier_rows(db)
    assert {u: r["origin"] for u, r in rows.items()} == {
        local_site.url("/n/1"): "sitemap",
        local_site.url("/n/2"): "sitemap",
    }
    assert rows[local_site.url("/n/1")]["discovery_meta"]["published_at"].startswith("2030-02-28")
    assert await log_rows(db, source) == [("feed", "ok", 200)]


async def test_a_sitemap_source_that_also_sets_sitemap_url_requests_it_once_a_poll(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy
) -> None:
    """Issue 29 item 7: the kind polls `sitemap_url` (its default target); the sitemaps
    polled beside a source's feed must not read it a second time in the same poll."""
    local_site.serve(
        "/sitemap.xml",
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{local_site.url('/n/1')}</loc></url></urlset>",
        content_type="application/xml",
    )
    source = await create(
        db,
        {
            "name": "maps",
            "kind": "sitemap",
            "base_url": local_site.url("/"),
            "sitemap_url": local_site.url("/sitemap.xml"),
        },
    )

    [summary] = await Poller(db, client, policy).run_once(now=T0)

    assert summary.ok and summary.items_new == 1
    assert len(local_site.hits("/sitemap.xml")) == 1
    assert await log_rows(db, source) == [("feed", "ok", 200)]
    state = await feed_state(db, source)
    assert state["sitemap_next_poll_at"] is not None and state["sitemap_next_poll_at"] > T0


def index_of(site: LocalSite, *paths: str) -> str:
    locs = "".join(f"<sitemap><loc>{site.url(p)}</loc></sitemap>" for p in paths)
    return (
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{locs}</sitemapindex>"
    )


async def test_a_sitemap_source_follows_indexes_no_deeper_than_the_sitemaps_walk(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy
) -> None:
    """Issue 34 item 6: the kind reads its tree with the walk of a source's own sitemaps,
    so an index nested deeper than `MAX_DEPTH` is not followed (the kind had no depth
    limit), and what was skipped is named in the poll's error."""
    for level in range(MAX_DEPTH + 1):  # /i0.xml (the top) -> ... -> /i3.xml -> /leaf.xml
        child = f"/i{level + 1}.xml" if level < MAX_DEPTH else "/leaf.xml"
        extra = ("/pages.xml",) if level == 1 else ()
        body = index_of(local_site, child, *extra)
        local_site.serve(f"/i{level}.xml", body, content_type="application/xml")
    page = '<?xml version="1.0"?><urlset><url><loc>{}</loc></url></urlset>'
    local_site.serve("/pages.xml", page.format(local_site.url("/n/1")), content_type="text/xml")
    local_site.serve("/leaf.xml", page.format(local_site.url("/n/deep")), content_type="text/xml")
    source = await create(
        db, {"name": "deep", "kind": "sitemap", "config": {"url": local_site.url("/i0.xml")}}
    )

    [summary] = await Poller(db, client, policy).run_once(now=T0)

    assert (summary.ok, summary.items_new) == (True, 1)
    assert list(await frontier_rows(db)) == [local_site.url("/n/1")]
    assert local_site.hits("/leaf.xml") == []
    assert all(len(local_site.hits(f"/i{level}.xml")) == 1 for level in range(MAX_DEPTH + 1))
    error = f"index nested deeper than {MAX_DEPTH} ({local_site.url(f'/i{MAX_DEPTH}.xml')})"
    assert summary.error == error
    assert (await feed_state(db, source))["last_error"] == error
    assert await log_rows(db, source) == [("feed", "ok", 200)]


async def test_a_sitemap_source_requests_no_more_than_max_files_when_children_fail(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy
) -> None:
    """Issue 34 item 6: a child that fails counts as a document read, as in the sitemaps
    walk: an index naming 30 missing sitemaps costs `max_files` requests, not 31."""
    missing = [f"/gone/{n}.xml" for n in range(30)]
    local_site.serve("/index.xml", index_of(local_site, *missing), content_type="text/xml")
    await create(
        db,
        {
            "name": "gone",
            "kind": "sitemap",
            "config": {"url": local_site.url("/index.xml"), "max_files": 5},
        },
    )

    [summary] = await Poller(db, client, policy).run_once(now=T0)

    assert summary.ok and summary.items_seen == 0
    assert [seen.path for seen in local_site.requests] == ["/index.xml", *missing[:4]]
    assert summary.error == "; ".join(f"HTTP 404 ({local_site.url(p)})" for p in missing[:4])


# -- a third-party kind through the entry-point group -----------------------------------


async def test_a_plugin_kind_installed_through_the_entry_point_group_is_polled(
    db: Database,
    client: SafeClient,
    local_site: LocalSite,
    policy: PollPolicy,
    plugin: KindRegistry,
) -> None:
    assert "echo" in plugin.kinds and {"feed", "sitemap", "wordpress"} <= set(plugin.kinds)
    local_site.serve(
        "/list.txt",
        f"{local_site.url('/e/1')} # First\n{local_site.url('/e/2')}\n{local_site.url('/e/3')}\n",
        content_type="text/plain",
    )
    source = await create(
        db,
        {
            "name": "echo",
            "kind": "echo",
            "config": {"url": local_site.url("/list.txt"), "limit": 2},
        },
    )

    [summary] = await Poller(db, client, policy, kinds=plugin).run_once(now=T0)

    assert (summary.ok, summary.items_seen, summary.items_new) == (True, 3, 2)
    rows = await frontier_rows(db)
    assert set(rows) == {local_site.url("/e/1"), local_site.url("/e/2")}
    assert rows[local_site.url("/e/1")]["discovery_meta"]["title"] == "First"
    assert await log_rows(db, source) == [("feed", "ok", 200)]


async def frontier_cli(*args: str, dsn: str, pythonpath: str) -> tuple[int, str, str]:
    path = os.pathsep.join(p for p in (pythonpath, os.environ.get("PYTHONPATH")) if p)
    return await frontier_output(*args, env=clean_env(dsn, PYTHONPATH=path))


@pytest.mark.parametrize(
    "config, refusal",
    [
        ({"url": "http://127.0.0.1/list.txt", "limit": 2}, None),
        ({"limit": 2}, "config: url: Field required"),
        ({"url": "http://127.0.0.1/l", "limit": 0}, "config: limit: Input should be greater"),
    ],
    ids=["accepted", "missing-url", "bad-limit"],
)
async def test_yaml_api_and_cli_judge_a_plugin_source_alike(
    db: Database,
    fresh_dsn: str,
    tmp_path: Path,
    plugin: KindRegistry,
    config: dict[str, Any],
    refusal: str | None,
) -> None:
    values = {"name": "echo source", "kind": "echo", "config": config}
    settings = Settings.load(database_url=fresh_dsn, home=tmp_path, api_token=TOKEN, _env_file=None)
    transport = httpx.ASGITransport(app=create_app(settings, db))
    answers: list[str | None] = []
    rows: list[dict[str, Any]] = []

    async def stored() -> None:
        record = await db.fetchrow(
            "SELECT kind, config FROM sources WHERE name = $1", values["name"]
        )
        if record is not None:
            rows.append(dict(record))
            await SourceRepository(db).remove(values["name"])

    summary = await import_specs(
        SourceRepository(db), parse_specs(yaml.safe_dump({"sources": [values]}).encode(), "s.yaml")
    )
    answers.append(summary.errors[0].reason if summary.errors else None)
    await stored()
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as api:
        response = await api.post("/api/v1/sources", headers=AUTH, json=values)
    assert response.status_code in (201, 422), response.text
    answers.append(None if response.status_code == 201 else response.json()["error"]["message"])
    await stored()
    code, _, err = await frontier_cli(
        "sources",
        "add",
        values["name"],
        "--kind",
        "echo",
        "--config",
        json.dumps(config),
        dsn=fresh_dsn,
        pythonpath=str(PLUGIN),
    )
    assert code in (0, 2) and "Traceback" not in err, err
    answers.append(None if code == 0 else err.strip().removeprefix("frontier: "))
    await stored()

    assert answers[0] == answers[1] == answers[2], answers
    if refusal is None:
        assert answers[0] is None
        assert rows == [{"kind": "echo", "config": config}] * 3
    else:
        assert answers[0] is not None and answers[0].startswith(refusal), answers
        assert rows == []


async def test_a_kind_that_is_not_installed_is_an_error_of_that_source_alone(
    db: Database,
    fresh_dsn: str,
    tmp_path: Path,
    client: SafeClient,
    local_site: LocalSite,
    policy: PollPolicy,
    plugin: KindRegistry,
) -> None:
    local_site.serve("/feed.xml", rss(("/ok/1", DATED)), content_type="application/rss+xml")
    good = await create(db, {"name": "good", "feed_url": local_site.url("/feed.xml")})
    orphan = await create(
        db,
        {"name": "orphan", "kind": "echo", "config": {"url": local_site.url("/list.txt")}},
        kinds=plugin,
    )
    uninstalled = KindRegistry({k: v for k, v in plugin.kinds.items() if k != "echo"})

    summaries = {
        s.source: s for s in await Poller(db, client, policy, kinds=uninstalled).run_once(now=T0)
    }

    assert summaries["good"].ok and summaries["good"].items_new == 1
    assert not summaries["orphan"].ok
    assert "source kind 'echo' is not installed" in (summaries["orphan"].error or "")
    assert await log_rows(db, orphan) == []  # a configuration error: no fetch-log row
    assert local_site.hits("/list.txt") == []
    assert await log_rows(db, good) == [("feed", "ok", 200)]
    row = await feed_state(db, orphan)
    assert row["consecutive_errors"] == 1 and row["next_poll_at"] > T0
    assert row["poll_lease_until"] is None
    # Visible where other source errors are: the API and `frontier sources list`.
    settings = Settings.load(database_url=fresh_dsn, home=tmp_path, api_token=TOKEN, _env_file=None)
    transport = httpx.ASGITransport(app=create_app(settings, db))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as api:
        shown = (await api.get(f"/api/v1/sources/{orphan.id}")).json()
    assert "source kind 'echo' is not installed" in shown["last_error"]
    assert shown["kind"] == "echo"
    code, out, err = await frontier_cli("sources", "list", dsn=fresh_dsn, pythonpath="")
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.startswith("orphan"))
    assert "error: kind: source kind 'echo' is not installed" in line


# -- per-source timeout, retries, host header -------------------------------------------


async def test_the_per_source_timeout_ends_a_slow_poll_and_is_retried(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy, sleeps: Sleeps
) -> None:
    release = asyncio.Event()

    async def slow(_request: web.Request) -> web.Response:
        await release.wait()  # answers only once the test is over
        return web.Response(text=rss(("/s/1", DATED)), content_type="application/rss+xml")

    local_site.route("/slow.xml", slow)
    local_site.serve("/fast.xml", rss(("/f/1", DATED)), content_type="application/rss+xml")
    slow_source = await create(
        db, {"name": "slow", "feed_url": local_site.url("/slow.xml"), "config": {"timeout_s": 0.2}}
    )
    fast = await create(db, {"name": "fast", "feed_url": local_site.url("/fast.xml")})
    try:
        summaries = {s.source: s for s in await Poller(db, client, policy).run_once(now=T0)}
    finally:
        release.set()

    assert summaries["fast"].ok
    assert not summaries["slow"].ok and "timed out" in (summaries["slow"].error or "")
    assert len(local_site.hits("/slow.xml")) == 3  # a timeout is retried within the poll
    assert sleeps.waits == [1.5, 3.0]  # linear backoff: 1x, 2x
    assert await log_rows(db, slow_source) == [("feed", "failed", None)]
    assert (await feed_state(db, fast))["consecutive_errors"] == 0


async def test_a_5xx_is_retried_within_the_poll_and_a_4xx_is_not(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy, sleeps: Sleeps
) -> None:
    answers = iter([502, 500])

    async def flaky(_request: web.Request) -> web.Response:
        status = next(answers, 200)
        if status != 200:
            return web.Response(status=status, text="upstream trouble")
        return web.Response(text=rss(("/r/1", DATED)), content_type="application/rss+xml")

    local_site.route("/flaky.xml", flaky)
    local_site.serve("/missing.xml", "gone", status=404)
    local_site.serve("/down.xml", "down", status=500)
    flaky_source = await create(db, {"name": "flaky", "feed_url": local_site.url("/flaky.xml")})
    missing = await create(db, {"name": "missing", "feed_url": local_site.url("/missing.xml")})
    down = await create(db, {"name": "down", "feed_url": local_site.url("/down.xml")})

    summaries = {s.source: s for s in await Poller(db, client, policy).run_once(now=T0)}

    assert summaries["flaky"].ok and summaries["flaky"].items_new == 1
    assert len(local_site.hits("/flaky.xml")) == 3
    assert await log_rows(db, flaky_source) == [("feed", "ok", 200)]
    assert len(local_site.hits("/missing.xml")) == 1  # never retried
    assert await log_rows(db, missing) == [("feed", "not_found", 404)]
    assert len(local_site.hits("/down.xml")) == 3  # then the poll counts as failed
    assert await log_rows(db, down) == [("feed", "failed", 500)]
    down_state = await feed_state(db, down)
    assert down_state["consecutive_errors"] == 1 and down_state["next_poll_at"] > T0
    assert sorted(sleeps.waits) == [1.5, 1.5, 3.0, 3.0]


async def test_a_connection_error_is_retried_then_fails_the_poll(
    db: Database, client: SafeClient, policy: PollPolicy, sleeps: Sleeps
) -> None:
    closed = LocalSite("127.0.0.7")
    await closed.start()
    url = closed.url("/feed.xml")
    await closed.stop()  # nothing listens there any more: connection refused
    source = await create(db, {"name": "refused", "feed_url": url})

    [summary] = await Poller(db, client, policy).run_once(now=T0)

    assert not summary.ok
    assert sleeps.waits == [1.5, 3.0]  # three attempts
    assert await log_rows(db, source) == [("feed", "failed", None)]


async def test_fetch_protection_sends_the_configured_host_header_at_level_2_only(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy
) -> None:
    local_site.serve("/a.xml", rss(("/a/1", DATED)), content_type="application/rss+xml")
    local_site.serve("/b.xml", rss(("/b/1", DATED)), content_type="application/rss+xml")
    local_site.serve("/c.xml", rss(("/c/1", DATED)), content_type="application/rss+xml")
    config = {"host_header": "news.harbour.example"}
    await create(db, {"name": "a", "feed_url": local_site.url("/a.xml"), "config": config})
    await create(
        db,
        {
            "name": "b",
            "feed_url": local_site.url("/b.xml"),
            "config": {**config, "referer": "https://www.harbour.example/news/"},
        },
    )
    await create(
        db,
        {"name": "c", "feed_url": local_site.url("/c.xml"), "config": config, "fetchprotection": 1},
    )

    await Poller(db, client, policy).run_once(now=T0)

    [a] = local_site.hits("/a.xml")
    assert a.headers["Host"] == "news.harbour.example"
    assert a.headers["Origin"] == "https://news.harbour.example"
    assert a.headers["Referer"] == "https://news.harbour.example/"
    [b] = local_site.hits("/b.xml")
    assert b.headers["Referer"] == "https://www.harbour.example/news/"
    [c] = local_site.hits("/c.xml")  # level 1: a bare request
    assert c.headers["Host"] == f"{local_site.address}:{local_site.port}"
    assert "Origin" not in c.headers and "Referer" not in c.headers


# -- validators, random-k, undated entries ----------------------------------------------


async def test_a_200_with_the_stored_validators_is_not_modified(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy
) -> None:
    # A server that ignores If-None-Match / If-Modified-Since but sends the same validators.
    local_site.serve(
        "/etag.xml",
        rss(("/v/1", DATED)),
        content_type="application/rss+xml",
        headers={"ETag": '"same"'},
    )
    local_site.serve(
        "/lm.xml",
        rss(("/w/1", DATED)),
        content_type="application/rss+xml",
        headers={"Last-Modified": "Sat, 28 Feb 2030 10:00:00 GMT"},
    )
    by_etag = await create(db, {"name": "etag", "feed_url": local_site.url("/etag.xml")})
    by_date = await create(db, {"name": "lm", "feed_url": local_site.url("/lm.xml")})
    poller = Poller(db, client, policy)
    await poller.run_once(now=T0)
    await db.execute("DELETE FROM url_frontier")  # a re-parse would submit them again

    later = T0 + timedelta(days=1)
    summaries = {s.source: s for s in await poller.run_once(now=later)}

    assert local_site.hits("/etag.xml")[1].headers["If-None-Match"] == '"same"'
    assert {n: (s.ok, s.outcome, s.items_new) for n, s in summaries.items()} == {
        "etag": (True, "not_modified", 0),
        "lm": (True, "not_modified", 0),
    }
    assert await log_rows(db, by_etag) == [("feed", "ok", 200), ("feed", "not_modified", 200)]
    assert await log_rows(db, by_date) == [("feed", "ok", 200), ("feed", "not_modified", 200)]
    assert await frontier_rows(db) == {}
    assert (await feed_state(db, by_etag))["last_polled_at"] == later


async def test_random_k_draws_the_same_entries_in_a_dry_run_and_the_real_poll(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy
) -> None:
    links = [(f"/k/{n}", DATED) for n in range(20)]
    local_site.serve("/many.xml", rss(*links), content_type="application/rss+xml")
    source = await create(
        db,
        {"name": "sample", "feed_url": local_site.url("/many.xml"), "url_filters": {"random": 5}},
    )

    dry = await fire_source(db, client, source.id, dry_run=True, now=T0, policy=policy)
    real = await fire_source(db, client, source.id, dry_run=False, now=T0, policy=policy)

    drawn = [e.url for e in dry.entries]
    assert len(drawn) == 5 and real.items_seen == 20 and real.items_new == 5
    assert set(await frontier_rows(db)) == set(drawn)
    # The next poll draws afresh (its seed is the poll written just now).
    later = T0 + timedelta(hours=1)
    again = await fire_source(db, client, source.id, dry_run=True, now=later, policy=policy)
    assert len(again.entries) == 5 and {e.url for e in again.entries} != set(drawn)


async def test_an_undated_entry_is_dated_by_updated_then_by_when_it_was_first_seen(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy
) -> None:
    atom = (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>'
        f'<entry><title>Updated only</title><link href="{local_site.url("/u/1")}"/>'
        "<id>u1</id><updated>2030-02-27T09:30:00Z</updated></entry>"
        f'<entry><title>No date</title><link href="{local_site.url("/u/2")}"/><id>u2</id></entry>'
        "</feed>"
    )
    local_site.serve("/atom.xml", atom, content_type="application/atom+xml")
    local_site.serve("/plain.xml", rss(("/p/1", None)), content_type="application/rss+xml")
    await create(db, {"name": "atom", "feed_url": local_site.url("/atom.xml")})
    await create(db, {"name": "plain", "feed_url": local_site.url("/plain.xml")})
    poller = Poller(db, client, policy)

    await poller.run_once(now=T0)
    await poller.run_once(now=T0 + timedelta(days=2))  # seen again later: still first seen

    meta = {url: row["discovery_meta"] for url, row in (await frontier_rows(db)).items()}
    assert meta[local_site.url("/u/1")]["published_at"] == "2030-02-27T09:30:00+00:00"
    assert meta[local_site.url("/u/2")]["published_at"] == T0.isoformat()
    assert meta[local_site.url("/p/1")]["published_at"] == T0.isoformat()
    assert len(local_site.hits("/plain.xml")) == 2


async def test_a_stored_config_the_kind_refuses_is_a_configuration_error(
    db: Database, client: SafeClient, local_site: LocalSite, policy: PollPolicy
) -> None:
    source = await create(db, {"name": "wp", "base_url": local_site.url("/"), "kind": "wordpress"})
    # Written around the schema, as an older plugin version might have accepted it.
    await db.execute("UPDATE sources SET config = '{\"per_page\": 900}' WHERE id = $1", source.id)

    [summary] = await Poller(db, client, policy).run_once(now=T0)

    assert not summary.ok and (summary.error or "").startswith("config.per_page:")
    assert local_site.requests == [] and await log_rows(db, source) == []
    with pytest.raises(InvalidSource, match="config: per_page"):
        await SourceRepository(db).update(source.id, parse_patch({"config": {"per_page": 900}}))
