"""Test fixtures: one session-wide real PostgreSQL (embedded, run unprivileged), the schema
built once into a template database, and a fresh copy of it for each test that asks.

Set FRONTIER_TEST_DATABASE_URL to an admin DSN of another server to run against it instead.
With FRONTIER_TEST_CITUS_WORKERS (the workers' admin DSNs, space-separated) as well, that
server is the coordinator of a Citus cluster (`make test-citus`, .ci/with-citus): every
database is made on every node, the template has the citus extension and the nodes
registered before it is migrated (so migration 0018 distributes the schema), and each
test's copy is copied from the template on every node at once.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from frontier import migrate
from frontier.db import Database
from frontier.embedded import EmbeddedPostgres
from frontier.settings import Settings
from tests.local_site import LocalSite, running_site

TEMPLATE = "frontier_template"
_database_numbers = itertools.count()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for marker in ("integration", "acceptance", "bench"):
            if f"/tests/{marker}/" in str(item.path):
                item.add_marker(marker)


def _with_database(admin_dsn: str, database: str) -> str:
    parts = urlsplit(admin_dsn)
    return urlunsplit(parts._replace(path=f"/{database}"))


def _create(admin_dsn: str, database: str, template: str | None) -> None:
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
        )
        statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database))
        if template:
            statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        deadline = time.monotonic() + 10
        while True:
            try:
                conn.execute(statement)
                return
            # On Citus, a template's maintenance daemon may still be leaving it.
            except psycopg.errors.ObjectInUse:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)


class PostgresServer:
    """An admin DSN and a way to name databases on the test server (and, on a Citus
    cluster, the workers' admin DSNs: each database then exists on every node)."""

    def __init__(self, admin_dsn: str, workers: list[str] | None = None) -> None:
        self.admin_dsn = admin_dsn
        self.workers = workers or []

    def dsn(self, database: str) -> str:
        return _with_database(self.admin_dsn, database)

    def create(self, database: str, template: str | None = None) -> str:
        for admin in [self.admin_dsn, *self.workers]:
            _create(admin, database, template)
        return self.dsn(database)

    def create_citus_template(self, database: str) -> str:
        """A database with the citus extension on every node and the workers registered
        with the coordinator: what `frontier db upgrade` distributes."""
        self.create(database)
        for admin in [self.admin_dsn, *self.workers]:
            with psycopg.connect(_with_database(admin, database), autocommit=True) as conn:
                conn.execute("CREATE EXTENSION citus")
        with psycopg.connect(self.dsn(database), autocommit=True) as conn:
            coordinator_port = conn.execute("SHOW port").fetchone()
            assert coordinator_port is not None
            conn.execute(
                "SELECT citus_set_coordinator_host('127.0.0.1', %s)", [int(coordinator_port[0])]
            )
            for admin in self.workers:
                with psycopg.connect(admin) as worker:
                    port = worker.execute("SHOW port").fetchone()
                    assert port is not None
                conn.execute("SELECT citus_add_node('127.0.0.1', %s)", [int(port[0])])
        return self.dsn(database)

    def freeze_template(self, database: str) -> None:
        """Close `database` to connections on every node, so it can be copied (Citus keeps
        a maintenance daemon connected to each database that has the extension)."""
        for admin in [self.admin_dsn, *self.workers]:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(
                    sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(
                        sql.Identifier(database)
                    )
                )
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                    [database],
                )

    def drop(self, database: str) -> None:
        for admin in [self.admin_dsn, *self.workers]:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                        sql.Identifier(database)
                    )
                )


@pytest.fixture
def frontier_home() -> Iterator[Path]:
    """A FRONTIER_HOME for a test's own embedded PostgreSQL. Under the system's temp
    directory, not pytest's tmp_path: as root, the server runs as its own user, which must
    be able to enter every parent (pytest's base directory is closed to others)."""
    home = Path(tempfile.mkdtemp(prefix="frontier-home-"))
    home.chmod(0o755)  # as `mkdir` makes `./.frontier`; the demo's database is one level down
    yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    external = os.environ.get("FRONTIER_TEST_DATABASE_URL")
    if external:
        yield PostgresServer(external, os.environ.get("FRONTIER_TEST_CITUS_WORKERS", "").split())
        return
    home = Path(tempfile.mkdtemp(prefix="frontier-test-"))
    embedded = EmbeddedPostgres(home, database="postgres", delete_on_stop=True)
    embedded.start()
    # Durability is not under test; these make each test's database work much faster.
    embedded.configure({"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"})
    try:
        yield PostgresServer(embedded.dsn("postgres"))
    finally:
        embedded.stop()


@pytest.fixture(scope="session")
def template_dsn(pg_server: PostgresServer) -> str:
    """A database migrated to head, copied for each test."""
    if not pg_server.workers:
        dsn = pg_server.create(TEMPLATE)
        migrate.upgrade(dsn)
        return dsn
    dsn = pg_server.create_citus_template(TEMPLATE)
    migrate.upgrade(dsn)
    pg_server.freeze_template(TEMPLATE)
    return dsn


@pytest.fixture
def fresh_dsn(pg_server: PostgresServer, template_dsn: str) -> Iterator[str]:
    """A DSN of a new database with the current schema, dropped after the test."""
    name = f"frontier_test_{os.getpid()}_{next(_database_numbers)}"
    dsn = pg_server.create(name, template=TEMPLATE)
    try:
        yield dsn
    finally:
        pg_server.drop(name)


@pytest.fixture
def empty_dsn(pg_server: PostgresServer) -> Iterator[str]:
    """A DSN of a new database with no schema at all."""
    name = f"frontier_empty_{os.getpid()}_{next(_database_numbers)}"
    dsn = pg_server.create(name)
    try:
        yield dsn
    finally:
        pg_server.drop(name)


@pytest.fixture
def settings(fresh_dsn: str, tmp_path: Path) -> Settings:
    return Settings.load(
        database_url=fresh_dsn, home=tmp_path, allow_private_networks=True, _env_file=None
    )


@pytest.fixture
async def local_site() -> AsyncIterator[LocalSite]:
    """A real HTTP server on 127.0.0.1 (see tests/local_site.py)."""
    async with running_site("127.0.0.1") as site:
        yield site


@pytest.fixture
async def partner_site() -> AsyncIterator[LocalSite]:
    """A second host: a real HTTP server on 127.0.0.2."""
    async with running_site("127.0.0.2") as site:
        yield site


@pytest.fixture
async def db(fresh_dsn: str) -> AsyncIterator[Database]:
    database = await Database.connect(fresh_dsn, max_size=8)
    try:
        yield database
    finally:
        await database.close()
