"""Politeness by construction (issue 31): one request in flight per host, the delay counted
from the answer.

- A host with a delay is held by whoever sends it a request: the fetcher's claim, or a
  requester without a claim (the spider, the poller, a manual fire) through hosts.sql
  `take_slot`. The hold is the host's lease (`lease_owner`, `lease_until`), which keeps the
  host out of the claimable set (`ready_at`) until the answer is in; the answer releases
  it and moves `next_allowed_at` to the answer's time + the delay (hosts.sql
  `release_slots`). A holder that dies leaves a lease that expires.
- `host_state.in_flight`: how many URLs of the host are claimed (`fetching`). A host
  without a delay may be claimed while it has fewer than the per-host concurrency in
  flight (`FRONTIER_HOST_CONCURRENCY`); the claim adds one, and the statements that end a
  claim (complete, release, reap) take it off.
- The poller and the API (a manual fire) take and release host slots as the spider does:
  they may create a host's row and write its lease.

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-27
"""

from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None

SLOT_TAKERS = ("frontier_spider", "frontier_poller", "frontier_api")
INSERT_COLUMNS = "(host, min_delay_ms, lease_owner, lease_until, created_at, updated_at)"
UPDATE_COLUMNS = "(next_allowed_at, lease_owner, lease_until, updated_at)"

UPGRADE = (
    "ALTER TABLE host_state ADD COLUMN in_flight integer NOT NULL DEFAULT 0",
    # apart: Citus refuses a column added with a constraint
    "ALTER TABLE host_state ADD CONSTRAINT host_state_in_flight_check CHECK (in_flight >= 0)",
    """
    UPDATE host_state h SET in_flight = f.n
    FROM (SELECT host, bucket, count(*)::int AS n FROM url_frontier
          WHERE status = 'fetching' GROUP BY host, bucket) f
    WHERE h.host = f.host AND h.bucket = f.bucket
    """,
)


def upgrade() -> None:
    for statement in UPGRADE:  # one at a time, as Citus wants them (migration 0022)
        op.execute(statement)
    for role in SLOT_TAKERS:
        op.execute(
            f"GRANT INSERT {INSERT_COLUMNS}, UPDATE {UPDATE_COLUMNS} ON host_state TO {role}"
        )


def downgrade() -> None:
    # What 0008 granted the spider stays; the rest of the above is taken back.
    op.execute(
        "REVOKE INSERT (lease_owner, lease_until), UPDATE (lease_owner, lease_until) "
        "ON host_state FROM frontier_spider"
    )
    for role in ("frontier_poller", "frontier_api"):
        op.execute(
            "REVOKE INSERT (lease_owner, lease_until, created_at, updated_at), "
            f"UPDATE {UPDATE_COLUMNS} ON host_state FROM {role}"
        )
    op.execute("ALTER TABLE host_state DROP COLUMN in_flight")
