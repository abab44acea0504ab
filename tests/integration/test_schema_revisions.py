"""Where a database's schema stands against the code: `migrate.status` and `history`,
`frontier db current` and `frontier db history`, and a schema newer than the code (a
revision stamped into alembic_version that no file in migrations/ has) reported as such by
every command that checks it."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys

import psycopg
import pytest

import migrations
from frontier import migrate
from tests.integration.test_cli_foundation import frontier

FUTURE = "0999"  # a revision only a newer frontier would have
NEWER = re.compile(
    rf"the database schema at .* \(revision {FUTURE}\) is newer than this frontier "
    rf"\(head {re.escape(migrate.head())}\): upgrade frontier"
)


def stamp(dsn: str, revision: str) -> None:
    with psycopg.connect(dsn) as conn:
        conn.execute("UPDATE alembic_version SET version_num = %s", (revision,))


@pytest.fixture
def newer_dsn(fresh_dsn: str) -> str:
    stamp(fresh_dsn, FUTURE)
    return fresh_dsn


def test_the_history_is_one_line_of_revisions_from_the_first_to_head() -> None:
    revisions = migrate.history()
    assert revisions[0].down_revision is None
    for older, newer in itertools.pairwise(revisions):
        assert newer.down_revision == older.revision
    assert revisions[-1].revision == migrate.head()
    assert all(r.title for r in revisions)
    assert not any(r.current for r in revisions)


def test_the_head_every_command_checks_against_is_alembics() -> None:
    assert migrate.head() == migrations.HEAD  # a new revision moves migrations.HEAD too


def test_a_database_at_head_is_checked_without_loading_alembic(fresh_dsn: str) -> None:
    """The check every command makes as it starts: one query, no Alembic, SQLAlchemy or
    psycopg to import (asyncpg, which the commands use anyway, asks)."""
    code = (
        "import sys; from frontier import migrate; migrate.check_current(sys.argv[1]); "
        "migrate.make_ready(sys.argv[1], embedded=True); "
        "print(sorted(m for m in ('alembic', 'sqlalchemy', 'psycopg') if m in sys.modules))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, fresh_dsn], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


async def test_the_check_is_made_from_code_already_on_an_event_loop(fresh_dsn: str) -> None:
    migrate.check_current(fresh_dsn)  # its query on a loop of its own, in a thread


def test_status_at_head_behind_and_never_migrated(fresh_dsn: str, empty_dsn: str) -> None:
    at_head = migrate.status(fresh_dsn)
    assert (at_head.current, at_head.at_head, at_head.newer) == (migrate.head(), True, False)
    never = migrate.status(empty_dsn)
    assert (never.current, never.at_head, never.newer) == (None, False, False)
    older = migrate.history()[-2].revision
    stamp(fresh_dsn, older)
    behind = migrate.status(fresh_dsn)
    assert (behind.current, behind.at_head, behind.newer) == (older, False, False)
    with pytest.raises(migrate.SchemaOutdated, match="run `frontier db upgrade`"):
        migrate.check_current(fresh_dsn)


def test_a_newer_schema_is_reported_as_newer_by_every_check(newer_dsn: str) -> None:
    assert migrate.status(newer_dsn).newer
    for check in (
        lambda: migrate.check_current(newer_dsn),
        lambda: migrate.make_ready(newer_dsn, embedded=False),
        lambda: migrate.make_ready(newer_dsn, embedded=True),  # would upgrade: refused
        lambda: migrate.upgrade(newer_dsn),
        lambda: migrate.downgrade(newer_dsn, "base"),
    ):
        with pytest.raises(migrate.SchemaOutdated) as raised:
            check()
        assert NEWER.fullmatch(str(raised.value)), raised.value
        assert "frontier db upgrade" not in str(raised.value)
    assert migrate.current_revision(newer_dsn) == FUTURE  # nothing was migrated


def test_db_current_says_head_behind_or_newer(fresh_dsn: str) -> None:
    env = {"FRONTIER_DATABASE_URL": fresh_dsn}
    result = frontier("db", "current", env=env)
    assert (result.returncode, result.stdout) == (
        0,
        f"{migrate.head()} (head): the schema is current\n",
    )

    older = migrate.history()[-2].revision
    stamp(fresh_dsn, older)
    result = frontier("db", "current", env=env)
    assert result.returncode == 1, result.stderr
    assert result.stdout == f"{older}: behind head {migrate.head()}: run `frontier db upgrade`\n"

    stamp(fresh_dsn, FUTURE)
    result = frontier("db", "current", env=env)
    assert result.returncode == 2
    assert NEWER.fullmatch(result.stderr.strip().removeprefix("frontier: ")), result.stderr


def test_db_history_marks_the_current_revision(fresh_dsn: str) -> None:
    env = {"FRONTIER_DATABASE_URL": fresh_dsn}
    older = migrate.history()[-2].revision
    stamp(fresh_dsn, older)
    result = frontier("db", "history", env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [r.revision for r in migrate.history()]
    marked = [line for line in lines if "(current)" in line]
    assert len(marked) == 1 and marked[0].startswith(f"{older} (current)")
    assert lines[-1].startswith(f"{migrate.head()} (head)")


def test_db_history_of_a_newer_schema_says_so(newer_dsn: str) -> None:
    result = frontier("db", "history", env={"FRONTIER_DATABASE_URL": newer_dsn})
    assert result.returncode == 0, result.stderr
    assert "(current)" not in "".join(result.stdout.splitlines()[:-1])
    assert result.stdout.splitlines()[-1] == (
        f"{FUTURE} (current)  unknown to this frontier: newer than head {migrate.head()}; "
        "upgrade frontier"
    )


@pytest.mark.parametrize("command", [("status",), ("db", "upgrade")])
def test_commands_on_a_newer_schema_say_upgrade_frontier(
    newer_dsn: str, command: tuple[str, ...]
) -> None:
    result = frontier(*command, env={"FRONTIER_DATABASE_URL": newer_dsn})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert NEWER.fullmatch(lines[0].removeprefix("frontier: ")), lines[0]
