"""Least privilege (migration 0006): each service's real code runs under a LOGIN user that is
a member of its group role and does its work; none of the roles can change the schema, and
each is refused what its service never does (the fetcher deleting sources, a submitter
completing URLs). Also: the migration on a second database of the same server, its
downgrade, and a migrating owner without CREATEROLE."""

from __future__ import annotations

import asyncio
import itertools
import os
import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import asyncpg
import httpx
import psycopg
import pytest
from psycopg import sql

from fetcher.warc_input import WarcImport
from frontier import migrate
from frontier.api.app import create_app
from frontier.db import Database
from frontier.hosts import HostRepository, KeyBusy
from frontier.parse_pool import ParsePool
from frontier.politeness_key import KeyRepository
from frontier.safe_http.client import SafeClient
from frontier.safe_http.limits import HttpLimits
from frontier.settings import Settings
from frontier.sources import SourceRepository
from frontier.states import IngestionMode
from frontier.urls import normalize_url, url_hash
from poller import service as poller_service
from poller.policy import PollPolicy
from poller.scheduler import Poller
from poller.seeding import seed_defaults
from poller.websub_push import WebSubLoop
from spider.service import configure, crawl_in_child, due_sources, job_for
from tests.conditions import wait_until
from tests.conftest import PostgresServer, group_roles_held
from tests.fetch_harness import after, article, fetcher_for, frontier_row, manual_ref, submit
from tests.integration.test_warc_input import cc_news_warc
from tests.integration.test_websub import (
    Loops,
    atom,
    feed_source,
    policy_for,
    serving,
    subscribed,
)
from tests.local_site import LocalSite
from tests.websub_hub import running_hub

ROLE_OF = {
    "fetcher": "frontier_fetcher",
    "poller": "frontier_poller",
    "spider": "frontier_spider",
    "api": "frontier_api",
}
DDL = (
    "CREATE TABLE intruder (id int)",
    "ALTER TABLE url_frontier ADD COLUMN intruder int",
    "ALTER TABLE url_frontier DROP COLUMN last_error",
    "CREATE INDEX intruder_idx ON url_frontier (url)",
    "DROP TABLE url_frontier",
    "TRUNCATE url_frontier",
    "TRUNCATE sources CASCADE",
)
TOKEN = "test-token-0123456789abcdef0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
T0 = datetime(2030, 3, 1, 12, 0, tzinfo=UTC)
RUN_DEADLINE_S = 60
_numbers = itertools.count()


def dsn_as(dsn: str, user: str, password: str) -> str:
    """`dsn` with its user and password replaced."""
    parts = urlsplit(dsn)
    where = parts.netloc.rpartition("@")[2]
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{where}"
    return urlunsplit(parts._replace(netloc=netloc))


def unique_name(kind: str) -> str:
    return f"frontier_test_{kind}_{os.getpid()}_{next(_numbers)}"


def drop_roles(pg_server: PostgresServer, names: list[str], database_dsn: str | None) -> None:
    """Drop test roles, and first anything they own or were granted in `database_dsn`."""
    if database_dsn is not None:
        with psycopg.connect(database_dsn, autocommit=True) as conn:
            for name in names:
                if conn.execute("SELECT to_regrole(%s)", (name,)).fetchone() != (None,):
                    conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)))
    with psycopg.connect(pg_server.admin_dsn, autocommit=True) as conn:
        for name in names:
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))


@pytest.fixture
def users(pg_server: PostgresServer, fresh_dsn: str) -> Iterator[dict[str, str]]:
    """service -> the DSN of a new LOGIN user in that service's group role, on fresh_dsn's
    database. A password is set so this works on servers that ask for one."""
    password = secrets.token_hex(16)
    names = {service: unique_name(service) for service in ROLE_OF}
    try:
        with psycopg.connect(pg_server.admin_dsn, autocommit=True) as conn:
            for service, name in names.items():
                conn.execute(
                    sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
                        sql.Identifier(name),
                        sql.Literal(password),
                        sql.Identifier(ROLE_OF[service]),
                    )
                )
        yield {service: dsn_as(fresh_dsn, name, password) for service, name in names.items()}
    finally:
        drop_roles(pg_server, list(names.values()), fresh_dsn)


@asynccontextmanager
async def database(dsn: str) -> AsyncIterator[Database]:
    db = await Database.connect(dsn, max_size=4)
    try:
        yield db
    finally:
        await db.close()


async def refused(dsn: str, *statements: str) -> None:
    """Each statement fails with insufficient_privilege."""
    conn = await asyncpg.connect(dsn)
    try:
        for statement in statements:
            with pytest.raises(asyncpg.InsufficientPrivilegeError):
                await conn.execute(statement)
    finally:
        await conn.close()


def rss(*links: str) -> str:
    items = "".join(
        f"<item><title>Story {i}</title><link>{link}</link></item>" for i, link in enumerate(links)
    )
    return (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>{items}</channel></rss>'
    )


# -- fetcher ---------------------------------------------------------------------------


async def test_fetcher_role_claims_fetches_completes_and_stores(
    users: dict[str, str], db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/a", article("Alpha"))
    local_site.redirect("/old", "/b", status=301)
    local_site.serve("/b", article("Beta", word="weather"))
    await submit(db, local_site.url("/a"), local_site.url("/old"))

    async with database(users["fetcher"]) as fetcher_db:
        migrate.check_current(users["fetcher"])
        async with fetcher_for(fetcher_db) as fetcher:
            # LISTENs, claims, robots.txt, fetches, completes, stores. The deadline: a refused
            # sink write makes the fetcher release and re-claim forever instead of failing.
            summary = await asyncio.wait_for(fetcher.run(until_idle=True), RUN_DEADLINE_S)

            assert summary.batches >= 3, summary
            statuses = {
                url: (await frontier_row(db, local_site.url(url)))["status"]
                for url in ("/a", "/old", "/b")
            }
            assert statuses == {"/a": "fetched", "/old": "dead", "/b": "fetched"}
            stored = await db.fetch("SELECT url, title FROM raw_content ORDER BY url")
            assert [r["title"] for r in stored] == ["Alpha", "Beta"]

            # Lease renewal, release, and the reaper; then the maintenance statements.
            await submit(db, local_site.url("/c"))
            claims = await fetcher.queue.claim("w-test", 5)
            assert [c.url for c in claims] == [normalize_url(local_site.url("/c"))]
            assert await fetcher.queue.renew("w-test", [claims[0]]) == {claims[0].url_hash}
            released = await fetcher.queue.release("w-test", claims)
            assert released.applied == {claims[0].url_hash: "pending"}
            assert len(await fetcher.queue.claim("w-test", 5)) == 1
            reaped = await fetcher.queue.reap(now=datetime.now(UTC) + timedelta(hours=1))
            assert (reaped.returned, reaped.dead) == (1, 0)
            await fetcher.stats.compact(now=datetime.now(UTC) + timedelta(hours=1))
            future = datetime.now(UTC) + timedelta(days=1)
            assert await fetcher.fetch_log.prune(timedelta(0), now=future) >= 3

    assert (await frontier_row(db, local_site.url("/c")))["status"] == "pending"
    assert await db.fetchval("SELECT count(*) FROM fetch_log") == 0


async def test_fetcher_role_imports_a_warc_file(
    users: dict[str, str], db: Database, tmp_path: Path
) -> None:
    """`frontier import-warc` runs as the fetcher: submit, take, store, complete."""
    url = "https://news.example/2026/11/role"
    path = tmp_path / "role.warc.gz"
    path.write_bytes(cc_news_warc([(url, 200, "text/html", article("Role story").encode(), {})]))
    async with database(users["fetcher"]) as fetcher_db, fetcher_for(fetcher_db) as fetcher:
        warcs = WarcImport(fetcher, await manual_ref(fetcher_db), max_body_bytes=1_000_000)
        await warcs.import_file(path)
    assert (warcs.counts.imported, warcs.counts.errors) == (1, 0), warcs.counts.messages
    assert (await frontier_row(db, url))["status"] == "fetched"


async def test_fetcher_role_stores_a_variant_under_its_canonical(
    users: dict[str, str], db: Database, local_site: LocalSite
) -> None:
    def with_canonical(page: str, path: str) -> str:
        link = f"<link rel=canonical href='{local_site.url(path)}'>"
        return page.replace("</head>", link + "</head>")

    for path, canonical, page in [
        ("/a?share=twitter", "/a", article("Alpha")),
        ("/a", "/a", article("Alpha")),
        ("/b?ref=home", "/b", article("Beta", word="weather")),
        ("/b", "/b", article("Beta", word="weather")),
    ]:
        local_site.serve(path, with_canonical(page, canonical))
    await submit(db, local_site.url("/a?share=twitter"), local_site.url("/b"))
    await submit(db, local_site.url("/b?ref=home"))
    await db.execute("UPDATE url_frontier SET priority = 10 WHERE url LIKE '%?%'")
    await db.execute("UPDATE host_state SET pending_priority = 10")
    async with database(users["fetcher"]) as fetcher_db, fetcher_for(fetcher_db) as fetcher:
        for _ in range(5):  # batch by batch: one URL of the host each, by priority
            await fetcher.run_once(now=after(1))
    # The variants first, each stored under its own URL and submitting its canonical
    # (/a unknown, /b pending); each canonical, fetched itself, takes its article over
    # (the role reserves keys, removes the variant's document and links its row).
    assert {r["url"] for r in await db.fetch("SELECT url FROM raw_content")} == {
        normalize_url(local_site.url("/a")),
        normalize_url(local_site.url("/b")),
    }
    for canonical, variant in (("/a", "/a?share=twitter"), ("/b", "/b?ref=home")):
        assert (await frontier_row(db, local_site.url(canonical)))["status"] == "fetched"
        row = await frontier_row(db, local_site.url(variant))
        assert (row["status"], row["final_url"]) == (
            "dead",
            normalize_url(local_site.url(canonical)),
        )
        assert len(local_site.hits(canonical)) == 1


async def test_fetcher_role_is_refused_ddl_and_deleting_sources(
    users: dict[str, str], db: Database
) -> None:
    sources = await db.fetchval("SELECT count(*) FROM sources")

    await refused(
        users["fetcher"],
        *DDL,
        "DELETE FROM sources",
        "DELETE FROM url_frontier",
        "UPDATE sources SET enabled = false",
    )

    assert await db.fetchval("SELECT count(*) FROM sources") == sources
    assert await db.fetchval("SELECT count(*) FROM sources WHERE enabled") == sources


# -- poller ----------------------------------------------------------------------------


async def test_poller_role_seeds_and_polls_and_cannot_complete_urls(
    users: dict[str, str], db: Database, local_site: LocalSite
) -> None:
    local_site.serve("/feed.xml", rss("/p/1", "/p/2"), content_type="application/rss+xml")
    await SourceRepository(db).add("site", feed_url=local_site.url("/feed.xml"))
    policy = PollPolicy(concurrency=2, per_host=2, lease_s=60)

    async with database(users["poller"]) as poller_db:
        migrate.check_current(users["poller"])
        seeded = await seed_defaults(poller_db)  # what `frontier poll` does at start-up
        limits = HttpLimits("frontier-test/1", allow_private_networks=True)
        async with SafeClient(limits) as client:
            summaries = await Poller(poller_db, client, policy).run_once(now=T0)

    assert seeded.added and not seeded.errors, seeded
    names = {r["name"] for r in await db.fetch("SELECT name FROM sources")}
    assert set(seeded.added) <= names
    site = [s for s in summaries if s.source == "site"]
    assert [(s.ok, s.items_new) for s in site] == [(True, 2)], summaries
    urls = {r["url"] for r in await db.fetch("SELECT url FROM url_frontier")}
    assert urls == {local_site.url("/p/1"), local_site.url("/p/2")}

    await refused(
        users["poller"],
        *DDL,
        "DELETE FROM sources",
        "DELETE FROM url_frontier",
        "UPDATE url_frontier SET status = 'dead', dead_reason = 'gone'",
        "UPDATE host_state SET backoff_until = now()",
        "INSERT INTO spider_state (source_id) SELECT id FROM sources",
    )
    assert await db.fetchval("SELECT count(*) FROM url_frontier WHERE status = 'pending'") == 2


async def test_poller_and_api_roles_subscribe_verify_apply_and_unsubscribe_websub(
    users: dict[str, str], db: Database, local_site: LocalSite, tmp_path: Path
) -> None:
    """The whole WebSub cycle with the poller's and the API's grants (migration 0045)."""
    async with (
        running_hub() as hub,
        database(users["poller"]) as poller_db,
        database(users["api"]) as api_db,
        serving(api_db, users["api"], tmp_path) as served,
        SafeClient(HttpLimits("frontier-test/1", allow_private_networks=True)) as client,
        ParsePool() as parser,
    ):
        source = await feed_source(db, local_site, hub, "pushed")
        policy = policy_for(served)
        poller = Poller(poller_db, client, policy, parser=parser)
        push = WebSubLoop(poller_db, client, policy, None, parser)
        await subscribed(Loops(poller, push), hub, source)
        pushed = atom(local_site, "/pushed/2", hub=hub.url, self_url=source.feed_url)
        assert await hub.publish(source.feed_url or "", pushed.encode()) == [202]
        assert (await push.run_once()).submitted == 1

        await SourceRepository(db).remove("pushed")
        await push.run_once()
        await wait_until(lambda: not hub.subscriptions, deadline_s=60, what="unsubscribed")
    assert await db.fetchval("SELECT count(*) FROM websub_subscriptions") == 0
    assert (
        await db.fetchval(
            "SELECT count(*) FROM url_frontier WHERE url = $1", local_site.url("/pushed/2")
        )
        == 1
    )


# -- spider ----------------------------------------------------------------------------


async def test_spider_role_crawls_and_submits(
    users: dict[str, str], db: Database, local_site: LocalSite, tmp_path: Path
) -> None:
    local_site.serve("/", '<html><body><a href="/2024/01/01/alpha">a</a></body></html>')
    await SourceRepository(db).add(
        "news",
        base_url=local_site.url("/"),
        rate_limit_ms=0,
        mode=IngestionMode.SPIDER,
        article_patterns=[r"/\d{4}/\d{2}/\d{2}/"],
    )
    spider_dsn = users["spider"]
    settings = Settings.load(
        database_url=spider_dsn, home=tmp_path, allow_private_networks=True, _env_file=None
    )

    async with database(spider_dsn) as spider_db:
        migrate.check_current(spider_dsn)
        await configure(spider_db, "news", interval_hours=1)
        assert await due_sources(spider_db) == ["news"]
    result = await crawl_in_child(job_for(settings, spider_dsn, "news", max_depth=0))

    assert result.exit_code == 0 and result.summary.new_urls == 1, result.summary
    row = await frontier_row(db, local_site.url("/2024/01/01/alpha"))
    assert row["origin"] == "spider"
    state = await db.fetchrow("SELECT last_outcome FROM spider_state")
    assert state is not None and state["last_outcome"] == "ok"
    assert await db.fetchval("SELECT count(*) FROM spider_pages") == 1

    await refused(
        spider_dsn,
        *DDL,
        "DELETE FROM sources",
        "DELETE FROM spider_pages",
        "UPDATE url_frontier SET status = 'fetching'",
        "UPDATE feed_state SET next_poll_at = now()",
        # It takes hosts' request slots (next_allowed_at); backoff and leases are not its.
        "UPDATE host_state SET backoff_until = NULL, lease_owner = NULL",
    )


@pytest.mark.parametrize("service", ["fetcher", "spider", "poller", "api"])
async def test_every_requester_role_holds_politeness_keys(
    users: dict[str, str], service: str
) -> None:
    key, host = "zoo.blogspot.com", "a.zoo.blogspot.com"
    async with database(users[service]) as role_db:
        keys = KeyRepository(role_db)
        assert (await keys.take(key, "r1", lease_s=60)).taken
        assert await keys.release({key: ("r1", 300)}) == 1
        if service == "fetcher":
            return  # its claim holds hosts (the fetcher's own tests)
        hosts = HostRepository(role_db)
        assert (await hosts.take_slot(host, "r1", new_host_delay_ms=300, lease_s=60)).held
        snoozed = {host: KeyBusy(key, 1.0)}  # its key was busy: given back unrequested
        assert await hosts.release_slots({host: "r1"}, snoozed=snoozed) == 1


# -- API -------------------------------------------------------------------------------


async def test_api_role_serves_manages_sources_imports_and_fires(
    users: dict[str, str], db: Database, local_site: LocalSite, tmp_path: Path
) -> None:
    local_site.serve("/feed.xml", rss("/f/1"), content_type="application/rss+xml")
    settings = Settings.load(
        database_url=users["api"],
        home=tmp_path,
        api_token=TOKEN,
        allow_private_networks=True,
        _env_file=None,
    )

    async with database(users["api"]) as api_db:
        migrate.check_current(users["api"])
        limits = HttpLimits.from_settings(settings)
        async with SafeClient(limits) as client:
            app = create_app(settings, api_db, fire=poller_service.fire, client=client)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as api:
                created = await api.post(
                    "/api/v1/sources",
                    headers=AUTH,
                    json={"name": "blog", "feed_url": local_site.url("/feed.xml")},
                )
                assert created.status_code == 201, created.text
                source_id = created.json()["id"]
                patched = await api.patch(
                    f"/api/v1/sources/{source_id}", headers=AUTH, json={"priority": 8}
                )
                assert patched.status_code == 200 and patched.json()["priority"] == 8
                fired = await api.post(f"/api/v1/sources/{source_id}/fire", headers=AUTH)
                assert fired.status_code == 200 and fired.json()["items_new"] == 1, fired.text
                imported = await api.post(
                    "/api/v1/import",
                    headers=AUTH,
                    content=b"http://a.example/1\nhttp://a.example/2\n",
                )
                assert imported.status_code == 200 and imported.json()["accepted"] == 2
                # Requeue and purge failed and dead URLs (the owner kills one by hand: the
                # API role cannot).
                gone = url_hash(normalize_url("http://a.example/2"))
                kill = (
                    "UPDATE url_frontier SET status = 'dead', dead_reason = 'gone' "
                    "WHERE url_hash = $1"
                )
                await db.execute(kill, gone)
                requeued = await api.post("/api/v1/urls/requeue", headers=AUTH, json={})
                assert requeued.status_code == 200 and requeued.json()["requeued"] == 1
                await db.execute(kill, gone)
                purged = await api.post("/api/v1/urls/purge", headers=AUTH, json={"reason": "gone"})
                assert purged.status_code == 200 and purged.json()["purged"] == 1
                again = await api.post(
                    "/api/v1/import?requeue=true", headers=AUTH, content=b"http://a.example/2\n"
                )
                assert again.status_code == 200 and again.json()["accepted"] == 1
                for path in (
                    "/api/v1/stats",
                    "/api/v1/frontier",
                    "/api/v1/fetch-log",
                    "/api/v1/sources",
                    "/metrics",
                    "/",
                    "/healthz",
                    "/api/v1/documents",
                    "/api/v1/documents?search=story",
                    "/api/v1/urls/" + url_hash(normalize_url("http://a.example/1")),
                    "/documents",
                    "/hosts/a.example",
                ):
                    response = await api.get(path)
                    assert response.status_code == 200, (path, response.text)
                assert (await api.get("/api/v1/stats")).json()["total"] == 3
                # The dashboard's login and logout (its sessions table, migration 0030).
                form = {"Content-Type": "application/x-www-form-urlencoded"}
                login = await api.post("/login", content=f"token={TOKEN}", headers=form)
                assert login.status_code == 303, login.text
                page = await api.get("/", headers={"Accept": "text/html"})
                assert "logged in (write)" in page.text
                csrf = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
                logout = await api.post("/logout", content=f"csrf={csrf}", headers=form)
                assert logout.status_code == 303, logout.text
                deleted = await api.delete(f"/api/v1/sources/{source_id}", headers=AUTH)
                assert deleted.status_code == 204

    assert await db.fetchval("SELECT count(*) FROM sources WHERE name = 'blog'") == 0
    assert await db.fetchval("SELECT count(*) FROM url_frontier") == 3  # kept, source unset

    # Since migration 0022 it requeues and purges failed and dead URLs (UPDATE of the
    # columns a requeue resets, DELETE); claiming and completing stay the fetcher's.
    await refused(
        users["api"],
        *DDL,
        "UPDATE url_frontier SET claimed_by = 'api', lease_until = now()",
        "UPDATE url_frontier SET content_hash = NULL, etag = NULL",
        "DELETE FROM raw_content",
        "UPDATE host_state SET backoff_until = now()",
        "UPDATE api_sessions SET expires_at = 'infinity'",
    )


# -- all roles -------------------------------------------------------------------------


async def test_no_role_can_create_alter_or_drop_anything(
    users: dict[str, str], db: Database
) -> None:
    rows = await db.fetch("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    tables = sorted(r["tablename"] for r in rows)
    assert "url_frontier" in tables and "alembic_version" in tables
    owned = await db.fetchval(
        "SELECT count(*) FROM pg_class WHERE relowner = ANY (SELECT oid FROM pg_roles "
        "WHERE rolname = ANY ($1::text[]))",
        list(ROLE_OF.values()),
    )
    assert owned == 0
    for service, dsn in users.items():
        conn = await asyncpg.connect(dsn)
        try:
            assert not await conn.fetchval(
                "SELECT has_schema_privilege(current_schema(), 'CREATE')"
            ), service
            assert not await conn.fetchval(
                "SELECT has_database_privilege(current_database(), 'CREATE')"
            ), service
            for table in tables:
                for statement in (
                    f"ALTER TABLE {table} ADD COLUMN intruder int",
                    f"ALTER TABLE {table} OWNER TO CURRENT_USER",
                    f"DROP TABLE {table} CASCADE",
                    f"TRUNCATE {table} CASCADE",
                ):
                    with pytest.raises(asyncpg.InsufficientPrivilegeError):
                        await conn.execute(statement)
            for statement in (
                "CREATE TABLE intruder (id int)",
                "CREATE VIEW intruder AS SELECT 1",
                "CREATE FUNCTION intruder() RETURNS int LANGUAGE sql AS 'SELECT 1'",
                "CREATE SCHEMA intruder",
            ):
                with pytest.raises(asyncpg.InsufficientPrivilegeError):
                    await conn.execute(statement)
        finally:
            await conn.close()
    assert await db.fetchval("SELECT count(*) FROM sources WHERE name = 'manual'") == 1


def test_every_table_is_granted_to_some_role(template_dsn: str) -> None:
    """A table added by a later migration without grants would break its service."""
    with psycopg.connect(template_dsn) as conn:
        ungranted = conn.execute(
            """SELECT t.tablename FROM pg_tables t
               WHERE t.schemaname = current_schema()
                 AND NOT EXISTS (SELECT FROM unnest(%s::text[]) AS r(role)
                                 WHERE has_any_column_privilege(r.role, t.tablename::regclass,
                                                                'SELECT, INSERT'))""",
            (list(ROLE_OF.values()),),
        ).fetchall()
    assert ungranted == []


# -- the migration itself --------------------------------------------------------------


def privileges(dsn: str) -> dict[str, bool]:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            # (PUBLIC may use the schema too, so its ACL is read rather than the privilege.)
            """SELECT EXISTS (SELECT FROM pg_namespace n, aclexplode(n.nspacl) a
                              WHERE n.nspname = current_schema()
                                AND a.grantee = 'frontier_fetcher'::regrole),
                      has_table_privilege('frontier_fetcher', 'url_frontier', 'UPDATE'),
                      has_table_privilege('frontier_fetcher', 'sources', 'DELETE'),
                      has_any_column_privilege('frontier_poller', 'url_frontier', 'INSERT'),
                      has_column_privilege('frontier_poller', 'url_frontier', 'status',
                                           'UPDATE'),
                      has_table_privilege('frontier_api', 'sources', 'DELETE')"""
        ).fetchone()
    assert row is not None
    keys = (
        "usage",
        "fetcher_updates_frontier",
        "fetcher_deletes_sources",
        "poller_submits",
        "poller_updates_status",
        "api_deletes_sources",
    )
    return dict(zip(keys, row, strict=True))


GRANTED = {
    "usage": True,
    "fetcher_updates_frontier": True,
    "fetcher_deletes_sources": False,
    "poller_submits": True,
    "poller_updates_status": False,
    "api_deletes_sources": True,
}
REVOKED = dict.fromkeys(GRANTED, False)


def roles_exist(dsn: str) -> bool:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_roles WHERE rolname = ANY (%s)", (list(ROLE_OF.values()),)
        ).fetchone()
    return row == (len(ROLE_OF),)


def test_a_second_database_is_granted_and_its_downgrade_revokes_only_there(
    template_dsn: str, empty_dsn: str
) -> None:
    migrate.upgrade(empty_dsn)  # the roles exist already: the template created them
    assert privileges(empty_dsn) == GRANTED

    migrate.downgrade(empty_dsn, "0005")

    assert privileges(empty_dsn) == REVOKED
    assert roles_exist(empty_dsn)  # the template still uses them
    assert privileges(template_dsn) == GRANTED
    migrate.upgrade(empty_dsn)
    assert privileges(empty_dsn) == GRANTED


def test_create_on_the_schema_granted_to_public_is_revoked(empty_dsn: str) -> None:
    """What PostgreSQL before 15 grants by default would let every role create tables."""
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")

    migrate.upgrade(empty_dsn)

    with psycopg.connect(empty_dsn) as conn:
        row = conn.execute(
            "SELECT has_schema_privilege('public', 'public', 'CREATE'), "
            "bool_or(has_schema_privilege(r, 'public', 'CREATE')) FROM unnest(%s::text[]) r",
            (list(ROLE_OF.values()),),
        ).fetchone()
    assert row == (False, False)


@pytest.fixture
def unprivileged_owner(pg_server: PostgresServer, template_dsn: str) -> Iterator[str]:
    """A DSN of a new database owned by a new LOGIN user without CREATEROLE; the roles
    exist (the migrated template made them)."""
    owner, name, password = unique_name("owner"), unique_name("db"), secrets.token_hex(16)
    with psycopg.connect(pg_server.admin_dsn, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN NOCREATEROLE PASSWORD {}").format(
                sql.Identifier(owner), sql.Literal(password)
            )
        )
        conn.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(name), sql.Identifier(owner)
            )
        )
    try:
        yield dsn_as(pg_server.dsn(name), owner, password)
    finally:
        pg_server.drop(name)
        drop_roles(pg_server, [owner], None)


def revision(dsn: str) -> str | None:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return row[0] if row else None


def test_an_owner_without_createrole_migrates_when_the_roles_exist(
    unprivileged_owner: str,
) -> None:
    migrate.upgrade(unprivileged_owner)
    assert privileges(unprivileged_owner) == GRANTED
    migrate.downgrade(unprivileged_owner, "base")  # may not drop the roles: kept, no error
    assert roles_exist(unprivileged_owner)
    assert revision(unprivileged_owner) is None


def test_an_owner_without_createrole_is_told_which_roles_to_create(
    pg_server: PostgresServer, unprivileged_owner: str
) -> None:
    hidden = unique_name("hidden")
    rename = "ALTER ROLE {} RENAME TO {}"
    # The role is the server's: no other test (another xdist worker's) may run meanwhile.
    with group_roles_held(pg_server.admin_dsn, alone=True):
        with psycopg.connect(pg_server.admin_dsn, autocommit=True) as conn:
            conn.execute(
                sql.SQL(rename).format(sql.Identifier("frontier_api"), sql.Identifier(hidden))
            )
        try:
            with pytest.raises(migrate.MigrationFailed, match="CREATE ROLE frontier_api NOLOGIN"):
                migrate.upgrade(unprivileged_owner)
            assert revision(unprivileged_owner) == "0005"  # 0006 rolled back whole
            with psycopg.connect(unprivileged_owner) as conn:
                row = conn.execute(
                    "SELECT count(*) FROM pg_class "
                    "WHERE relnamespace = current_schema()::regnamespace AND relacl IS NOT NULL"
                ).fetchone()
            assert row is not None and row[0] == 0  # no grants were made
        finally:
            with psycopg.connect(pg_server.admin_dsn, autocommit=True) as conn:
                conn.execute(
                    sql.SQL(rename).format(sql.Identifier(hidden), sql.Identifier("frontier_api"))
                )
    migrate.upgrade(unprivileged_owner)  # once the role exists, simply run it again
    assert revision(unprivileged_owner) == migrate.head()
