"""Test fixtures: one session-wide real PostgreSQL (embedded, run unprivileged), the schema
built once into a template database, and a fresh copy of it for each test that asks.

Set FRONTIER_TEST_DATABASE_URL to an admin DSN of another server to run against it instead.
With FRONTIER_TEST_CITUS_WORKERS (the workers' admin DSNs, space-separated) as well, that
server is the coordinator of a Citus cluster (`make test-citus`, .ci/with-citus): every
database is made on every node, the template has the citus extension and the nodes
registered before it is migrated (so migration 0018 distributes the schema), and each
test's copy is copied from the template on every node at once.

Under pytest-xdist (`make test`) each worker is a process of its own, with its own embedded
server (`pg_server` is per session, and a session is per worker); on a shared server the
template's name is the worker's own, and the tests' databases carry the process id, so the
workers never touch one another's databases. On a Citus cluster the workers make their
templates one at a time (devtools/citus.py says why).
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from devtools import citus
from frontier import migrate
from frontier.db import Database
from frontier.embedded import EmbeddedPostgres
from frontier.settings import Settings
from tests.es_standin import ElasticsearchStandIn
from tests.local_site import LocalSite, running_site

# "frontier_template", or "frontier_template_gw0" in xdist's worker gw0.
TEMPLATE = "_".join(filter(None, ["frontier_template", os.environ.get("PYTEST_XDIST_WORKER")]))
_database_numbers = itertools.count()
# The group roles (migration 0006) belong to the server, not to a database. A test that
# takes one away for a moment (test_roles.py) holds this advisory lock alone; every test
# database and template is made and used holding it shared, so on a server the xdist
# workers share (PostgreSQL 15 in CI) no other test sees the role missing.
GROUP_ROLES_LOCK = 0x66726F6E_726F6C65  # "fronrole"


@contextmanager
def group_roles_held(admin_dsn: str, *, alone: bool = False) -> Iterator[None]:
    """Hold GROUP_ROLES_LOCK (shared, or `alone`) on the server until the block ends."""
    lock = "pg_advisory_lock" if alone else "pg_advisory_lock_shared"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(f"SELECT {lock}(%s)", [GROUP_ROLES_LOCK])
        yield


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    on_citus = bool(os.environ.get("FRONTIER_TEST_CITUS_WORKERS"))
    kept, left_out = [], []
    for item in items:
        for marker in ("integration", "acceptance", "bench"):
            if f"/tests/{marker}/" in str(item.path):
                item.add_marker(marker)
        # Every test on the test server, whichever fixture brings it (`make test-pg15`
        # selects them with `-m database`).
        if "pg_server" in getattr(item, "fixturenames", ()):
            item.add_marker("database")
        # A test of one kind of server runs in the stage that has it (`make test-citus`,
        # or every other), and is not collected elsewhere: never a run-time skip.
        needs = item.get_closest_marker("needs_env")
        if (
            (item.get_closest_marker("citus") and not on_citus)
            or (item.get_closest_marker("single_server") and on_citus)
            or (needs and not os.environ.get(needs.args[0]))
        ):
            left_out.append(item)
        else:
            kept.append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


class PostgresServer:
    """An admin DSN and a way to name databases on the test server (and, on a Citus
    cluster, the workers' admin DSNs: each database then exists on every node)."""

    def __init__(self, admin_dsn: str, workers: list[str] | None = None) -> None:
        self.admin_dsn = admin_dsn
        self.workers = workers or []

    def dsn(self, database: str) -> str:
        return citus.with_database(self.admin_dsn, database)

    def create(self, database: str, template: str | None = None) -> str:
        citus.create([self.admin_dsn, *self.workers], database, template)
        return self.dsn(database)

    def drop(self, database: str) -> None:
        citus.drop([self.admin_dsn, *self.workers], database)


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
    with group_roles_held(pg_server.admin_dsn):
        if not pg_server.workers:
            dsn = pg_server.create(TEMPLATE)
            migrate.upgrade(dsn)
            return dsn
        return citus.create_template(pg_server.admin_dsn, pg_server.workers, TEMPLATE)


@pytest.fixture
def fresh_dsn(pg_server: PostgresServer, template_dsn: str) -> Iterator[str]:
    """A DSN of a new database with the current schema, dropped after the test."""
    yield from new_database(pg_server)


@pytest.fixture
def second_dsn(pg_server: PostgresServer, template_dsn: str) -> Iterator[str]:
    """Another new database with the current schema (e.g. to import an export into)."""
    yield from new_database(pg_server)


def new_database(pg_server: PostgresServer) -> Iterator[str]:
    name = f"frontier_test_{os.getpid()}_{next(_database_numbers)}"
    with group_roles_held(pg_server.admin_dsn):
        dsn = pg_server.create(name, template=TEMPLATE)
        try:
            yield dsn
        finally:
            pg_server.drop(name)


@pytest.fixture
def empty_dsn(pg_server: PostgresServer) -> Iterator[str]:
    """A DSN of a new database with no schema at all."""
    name = f"frontier_empty_{os.getpid()}_{next(_database_numbers)}"
    with group_roles_held(pg_server.admin_dsn):
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
async def standin() -> AsyncIterator[ElasticsearchStandIn]:
    """The Elasticsearch stand-in (tests/es_standin.py), a real HTTP server on 127.0.0.1."""
    server = await ElasticsearchStandIn().start()
    try:
        yield server
    finally:
        await server.stop()


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
