"""A Citus database on a coordinator that served as a plain server first: run by
tests/integration/test_citus_upgrade_path.py on a Citus cluster of its own
(.ci/with-citus), whose workers have never seen the frontier's roles.

A database is made on the coordinator without the citus extension and migrated to head:
migration 0006 creates the roles there, and only there (roles are per server, and nothing
is distributed). Then a new database gets the extension and the workers, as
deploy/README.md's "From one server to a Citus cluster" says, and is migrated to head; its
0006 finds the roles already made on the coordinator, and its grants and the distributed
schema (0018) need them on the workers too.

Prints, per worker, the roles it has and whether frontier_fetcher may update url_frontier
there; exits non-zero with the migration's error otherwise.
"""

from __future__ import annotations

import os
import sys

import psycopg

from devtools import citus
from frontier import migrate
from frontier.errors import FrontierError

PLAIN = "frontier_plain_first"
DISTRIBUTED = "frontier_then_citus"
ROLES = ["frontier_fetcher", "frontier_poller", "frontier_spider", "frontier_api"]


def main() -> int:
    coordinator = os.environ["FRONTIER_TEST_DATABASE_URL"]
    workers = os.environ["FRONTIER_TEST_CITUS_WORKERS"].split()
    citus.create([coordinator], PLAIN)
    migrate.upgrade(citus.with_database(coordinator, PLAIN))
    dsn = citus.create_distributed(coordinator, workers, DISTRIBUTED)
    try:
        migrate.upgrade(dsn)
    except FrontierError as error:
        print(f"the upgrade on Citus failed: {error}", file=sys.stderr)
        return 1
    for worker in workers:
        with psycopg.connect(citus.with_database(worker, DISTRIBUTED)) as conn:
            row = conn.execute(
                "SELECT string_agg(rolname, ' ' ORDER BY rolname),"
                " has_table_privilege('frontier_fetcher', 'url_frontier', 'UPDATE')"
                " FROM pg_roles WHERE rolname = ANY(%s)",
                [ROLES],
            ).fetchone()
        assert row is not None
        print(row[0], "fetcher-updates" if row[1] else "fetcher-cannot-update")
    return 0


if __name__ == "__main__":
    sys.exit(main())
