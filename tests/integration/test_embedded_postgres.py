"""The embedded PostgreSQL as a local attacker sees it: as root, with a FRONTIER_HOME long
enough to push the socket out of the data directory, no other local user can connect, the
server holds no root group, authentication is never `trust`, and no directory outside
FRONTIER_HOME changes its permissions."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from frontier.embedded import EmbeddedPostgres, ServerUser
from frontier.errors import DatabaseUnavailable

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the server's own user exists as root")
OTHER = "frontier_probe"  # an ordinary local user, the attacker


@pytest.fixture(scope="module")
def long_home_server() -> Iterator[EmbeddedPostgres]:
    """A server whose FRONTIER_HOME path is 200 characters long."""
    base = tempfile.mkdtemp(prefix="frontier-")
    home = Path(base + "-" + "h" * (199 - len(base)))
    home.mkdir(mode=0o700)
    assert len(str(home)) == 200
    server = EmbeddedPostgres(home, database="postgres", delete_on_stop=True)
    parents_before = {p: p.stat().st_mode for p in home.parents}
    server.start()
    server.parents_before = parents_before  # type: ignore[attr-defined]
    yield server
    server.stop()
    shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(base, ignore_errors=True)


def other_user() -> ServerUser:
    try:
        pwd.getpwnam(OTHER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", OTHER], check=True)
    entry = pwd.getpwnam(OTHER)
    return ServerUser(OTHER, entry.pw_uid, entry.pw_gid)


def psql_as(
    user: ServerUser, server: EmbeddedPostgres, *args: str
) -> subprocess.CalledProcessError | None:
    """Run the server's psql as `user`; the error if it failed."""
    try:
        user.run([str(server.bin / "psql"), *args], cwd="/")
    except subprocess.CalledProcessError as exc:
        return exc
    return None


@as_root
def test_another_local_user_cannot_connect(long_home_server: EmbeddedPostgres) -> None:
    server, attacker = long_home_server, other_user()
    assert server.socket_dir != server.pgdata  # the path was too long for a socket in it
    assert psql_as(attacker, server, "--version") is None  # the attacker can run psql
    for target in (f"host={server.socket_dir}", f"host={server.socket_dir} user=postgres"):
        error = psql_as(attacker, server, "-d", f"dbname=postgres {target}", "-c", "SELECT 1")
        assert error is not None and error.returncode == 2, error
    # and the socket directory is the server user's alone
    status = server.socket_dir.stat()
    assert status.st_mode & 0o777 == 0o700
    assert status.st_uid == pwd.getpwnam("embedded_postgres").pw_uid


@as_root
def test_the_server_holds_its_own_group_only(long_home_server: EmbeddedPostgres) -> None:
    pid = int((long_home_server.pgdata / "postmaster.pid").read_text().split()[0])
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    own_gid = str(pwd.getpwnam("embedded_postgres").pw_gid)
    assert set(status["Gid"].split()) == {own_gid}
    assert set(status["Groups"].split()) <= {own_gid}


@as_root
def test_nothing_outside_home_changes_permissions(long_home_server: EmbeddedPostgres) -> None:
    before = long_home_server.parents_before  # type: ignore[attr-defined]
    assert {p: p.stat().st_mode for p in before} == before


def test_authentication_is_never_trust_and_roles_need_their_password(
    long_home_server: EmbeddedPostgres,
) -> None:
    hba = (long_home_server.pgdata / "pg_hba.conf").read_text()
    rules = [line.split() for line in hba.splitlines() if line and not line.startswith("#")]
    assert rules and all(rule[0] == "local" and rule[3] != "trust" for rule in rules)
    with psycopg.connect(long_home_server.dsn("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier("no_password")))
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(
            f"dbname=postgres user=no_password host={long_home_server.socket_dir}"
        ).close()


@as_root
def test_a_home_the_server_user_cannot_reach_is_refused_by_name(tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    server = EmbeddedPostgres(closed / "home")
    with pytest.raises(DatabaseUnavailable, match=r"cannot enter .*FRONTIER_HOME"):
        server.start()
    assert closed.stat().st_mode & 0o777 == 0o700  # and it was left as it was


def test_a_parameter_that_needs_a_restart_is_applied(long_home_server: EmbeddedPostgres) -> None:
    long_home_server.configure({"shared_buffers": "64MB"})  # the server restarts
    with psycopg.connect(long_home_server.dsn("postgres")) as conn:
        assert conn.execute("SHOW shared_buffers").fetchone() == ("64MB",)
    log = (long_home_server.pgdata / "log").read_text()
    assert log.count("database system is ready to accept connections") >= 2  # in the log


def test_text_compares_by_code_point_and_lowercases_all_of_unicode(
    long_home_server: EmbeddedPostgres,
) -> None:
    """The cluster's default collation is PostgreSQL's own C.UTF-8 (the builtin provider),
    whatever the environment's locale: text compares byte by byte (code point order), and
    lower-casing, the search vectors' with it, knows every script, where the C library's
    `C` locale (initdb's where no locale is set) lower-cases ASCII only."""
    with psycopg.connect(long_home_server.dsn("postgres")) as conn:
        assert conn.execute(
            "SELECT datlocprovider, datlocale FROM pg_database WHERE datname = current_database()"
        ).fetchone() == ("b", "C.UTF-8")
        assert conn.execute("SELECT 'B' < 'a', 'z' < 'É', 'Ω' < 'ж'").fetchone() == (
            True,
            True,
            True,
        )
        assert conn.execute("SELECT lower('ÉMILE ΣΊΣΥΦΟΣ ПРИВЕТ')").fetchone() == (
            "émile σίσυφοσ привет",
        )
        assert conn.execute("SELECT to_tsvector('simple', 'ÉMILE Straße')::text").fetchone() == (
            "'straße':2 'émile':1",
        )
