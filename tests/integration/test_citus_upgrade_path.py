"""On a Citus cluster (`make test-citus`): a coordinator that served as a plain server
first holds the frontier's roles, and its workers do not; a Citus database made there
then migrates, and the roles reach the workers (migration 0006). Runs
tests/citus_upgrade_path.py on a cluster of its own (.ci/with-citus, from the same
PostgreSQL install as the test cluster's coordinator), since the shared cluster's workers
already have the roles."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.conftest import PostgresServer

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.citus
def test_a_citus_database_migrates_where_the_roles_exist_on_the_coordinator_only(
    pg_server: PostgresServer,
) -> None:
    assert pg_server.workers  # collected on a Citus cluster only
    with psycopg.connect(pg_server.admin_dsn) as conn:
        row = conn.execute("SELECT setting FROM pg_config WHERE name = 'BINDIR'").fetchone()
    assert row is not None
    pginstall = Path(row[0]).parent
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            str(ROOT / ".ci/with-citus"),
            str(pginstall),
            sys.executable,
            "-m",
            "tests.citus_upgrade_path",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    every_role = "frontier_api frontier_fetcher frontier_poller frontier_spider"
    assert done.stdout.splitlines() == [f"{every_role} fetcher-updates"] * 2, done.stdout
