"""The politeness key (issue 31, item 3): one request in flight per key, not only per host.

- `politeness_keys`: one row per key of mode `domain` (the registrable domain, from the
  public-suffix list) or `ip` (the resolved address), for the thousands of hosts one server
  answers (*.wordpress.com, *.blogspot.com). Whoever sends a request to a host of such a
  key holds the key too (`lease_owner`, `lease_until`: the same hold, and lease, as the
  host's); the answer releases it and moves `next_allowed_at` to the answer's time + the
  delay of the host just answered (frontier/sql/politeness_keys.sql). A key in mode
  `host` is the host itself: its hold is host_state's, and it has no row here.
- `host_state.busy_key`: the key whose request in flight (or delay) deferred the host's
  claim; the host was given back and snoozed until the key may be free (next_allowed_at).
  For `url show`, the dashboard and /metrics ("key busy"); meaningful while
  next_allowed_at is in the future.
- `sources.politeness_key`: a source's own key mode (NULL: FRONTIER_POLITENESS_KEY).

On Citus the table is distributed by `bucket` (the key's, frontier/buckets.py), co-located
with host_state: every statement on it names one bucket.

Revision ID: 0033
Revises: 0032
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None

KEY_TAKERS = ("frontier_fetcher", "frontier_spider", "frontier_poller", "frontier_api")
SLOT_TAKERS = ("frontier_spider", "frontier_poller", "frontier_api")

UPGRADE = (
    # The column, then its check: Citus refuses a column added with a constraint on a
    # distributed or reference table (`sources` is one), as migration 0022 found;
    # and first: a reference table cannot change after a parallel change to a
    # distributed one (host_state) in the same transaction.
    "ALTER TABLE sources ADD COLUMN politeness_key text",
    """
    ALTER TABLE sources ADD CONSTRAINT sources_politeness_key_check
        CHECK (politeness_key IN ('host', 'domain', 'ip'))
    """,
    """
    CREATE TABLE politeness_keys (
        bucket          integer NOT NULL DEFAULT 0,
        key             text NOT NULL,
        lease_owner     text,
        lease_until     timestamptz,
        next_allowed_at timestamptz NOT NULL DEFAULT '-infinity',
        updated_at      timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (key, bucket)
    )
    """,
    "ALTER TABLE host_state ADD COLUMN busy_key text",
)

DISTRIBUTE = (
    "SELECT create_distributed_table('politeness_keys', 'bucket', colocate_with => 'host_state')"
)


def has_citus() -> bool:
    found = op.get_bind().execute(
        sa.text("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
    )
    return bool(found.scalar())


def upgrade() -> None:
    for statement in UPGRADE:  # one at a time, as Citus wants them (migration 0022)
        op.execute(statement)
    if has_citus():
        op.execute(DISTRIBUTE)
    for role in KEY_TAKERS:
        op.execute(f"GRANT SELECT, INSERT, UPDATE ON politeness_keys TO {role}")
    for role in SLOT_TAKERS:  # release_slots writes it
        op.execute(f"GRANT UPDATE (busy_key) ON host_state TO {role}")


def downgrade() -> None:
    op.execute("ALTER TABLE sources DROP COLUMN politeness_key")
    op.execute("ALTER TABLE host_state DROP COLUMN busy_key")
    op.execute("DROP TABLE politeness_keys")
