"""Databases on a Citus cluster, for the test suite and the benchmarks (`make test-citus`,
`bench.claim_scaling --citus-workers`): a database is made on every node under the same
name, the `citus` extension is created in each, and the workers are registered with the
coordinator; migration 0018 then distributes the schema. A database made that way can be
the template of others, copied on every node at once (the copies are consistent: each
node's shards and metadata are copied with it), once it is closed to connections (Citus
keeps a maintenance daemon connected to every database with the extension).

Templates are made one at a time on a cluster: two made at once (pytest-xdist's workers,
each making its own) failed now and then in the coordinator's `citus_add_node` ("failure
on connection marked as essential"), in about one run in four.

Every DSN here is an admin (superuser) DSN in URL form; nodes reach each other on
127.0.0.1 at the port each one reports.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

from frontier import migrate

# A maintenance daemon leaves at the end of its task (a 2PC recovery round may wait on other
# nodes); 30 s ran out once in CI, on a clean clone under load.
TEMPLATE_BUSY_WAIT_S = 60.0
# The advisory lock (on the coordinator's admin database) held while a template is made.
TEMPLATE_LOCK = 0x6672_6F6E_7469_6572  # "frontier"


def with_database(admin_dsn: str, database: str) -> str:
    return urlunsplit(urlsplit(admin_dsn)._replace(path=f"/{database}"))


def _in_the_way(conn: psycopg.Connection, database: str) -> list[str]:
    """The processes connected to `database`, each described in a few words, after a
    SIGTERM to each (a maintenance daemon started again by a late connection included)."""
    rows = conn.execute(
        "SELECT pid, backend_type, application_name, state, wait_event,"
        " pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
        [database],
    ).fetchall()
    return [f"pid {r[0]} ({r[1]}, {r[2] or 'no name'}, {r[3]}, waiting on {r[4]})" for r in rows]


def _run_when_free(conn: psycopg.Connection, statement: sql.Composed, database: str) -> None:
    """Run `statement`, again while `database` is still in use by Citus's maintenance
    daemon (which FORCE does not end), up to TEMPLATE_BUSY_WAIT_S; the error then names
    what was connected."""
    deadline = time.monotonic() + TEMPLATE_BUSY_WAIT_S
    while True:
        try:
            conn.execute(statement)
            return
        except psycopg.errors.ObjectInUse as error:
            in_the_way = _in_the_way(conn, database)
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{database} still in use after {TEMPLATE_BUSY_WAIT_S:.0f} s: "
                    + ("; ".join(in_the_way) or "nothing connected now")
                ) from error
            time.sleep(0.05)


def drop(admin_dsns: Sequence[str], database: str) -> None:
    statement = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
    for admin in admin_dsns:
        with psycopg.connect(admin, autocommit=True) as conn:
            _run_when_free(conn, statement, database)


def create(admin_dsns: Sequence[str], database: str, template: str | None = None) -> None:
    """`database` (dropped first if it exists) on every server of `admin_dsns`."""
    drop(admin_dsns, database)
    statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database))
    if template:
        statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
    for admin in admin_dsns:
        with psycopg.connect(admin, autocommit=True) as conn:
            _run_when_free(conn, statement, template or database)


def _port(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SHOW port").fetchone()
    assert row is not None
    return int(row[0])


def create_distributed(coordinator: str, workers: Sequence[str], database: str) -> str:
    """`database` on the coordinator and every worker, with the citus extension and the
    workers registered; returns its DSN on the coordinator."""
    create([coordinator, *workers], database)
    return add_citus(coordinator, workers, database)


def add_citus(coordinator: str, workers: Sequence[str], database: str) -> str:
    """The citus extension in `database` (which exists on every node) on each node, and
    the workers registered with the coordinator, as deploy/README.md says for a database
    that becomes distributed; returns its DSN on the coordinator."""
    for admin in [coordinator, *workers]:
        with psycopg.connect(with_database(admin, database), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION citus")
    dsn = with_database(coordinator, database)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT citus_set_coordinator_host('127.0.0.1', %s)", [_port(coordinator)])
        for worker in workers:
            conn.execute("SELECT citus_add_node('127.0.0.1', %s)", [_port(worker)])
    return dsn


@contextmanager
def one_template_at_a_time(coordinator: str) -> Iterator[None]:
    """Hold the cluster's template lock: an advisory lock in a session of its own on the
    coordinator, released when the block ends (or the session does, if the process dies)."""
    with psycopg.connect(coordinator, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", [TEMPLATE_LOCK])
        yield


def create_template(coordinator: str, workers: Sequence[str], database: str) -> str:
    """`database` distributed over the cluster (create_distributed), migrated to the newest
    schema and closed to connections, ready to be copied; made while no other process makes
    one on this cluster. Returns its DSN on the coordinator."""
    with one_template_at_a_time(coordinator):
        dsn = create_distributed(coordinator, workers, database)
        migrate.upgrade(dsn)
        close_to_connections([coordinator, *workers], database)
    return dsn


def close_to_connections(admin_dsns: Sequence[str], database: str) -> None:
    """Let `database` be copied: no new connections, and those there ended."""
    for admin in admin_dsns:
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
