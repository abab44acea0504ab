"""Host summaries as deltas: `host_deltas`, one row per submitted batch, folded into
`host_state` by `queue.sql` `fold_host_deltas`.

Until now the submit statement upserted the `host_state` row of every host in its batch
(its pending count, best priority, earliest due time). A bulk import of URLs spread over
many hosts paid that for nearly every URL: nearly as many distinct hosts as URLs in a batch
on `bench.submit`'s many hosts, a large share of a row's work on top of the upsert
(bench/RESULTS.md, "Import at the table's own speed"). Now the submit statement appends its
batch's per-host summary as one row of parallel arrays, and the fold adds up every row
waiting in a bucket and upserts each host once. A submit folds right after its statement;
an import folds every few seconds and at its end, so a host that recurs from batch to
batch is written once per fold instead of once per batch. A row waiting is committed with
its URLs: an import killed between two folds leaves rows that the next fold (any submit,
or a fetcher's maintenance tick) takes, and nothing is lost. Until then its URLs are stored
but not yet claimable, and the host's pending count does not include them.

On Citus the table is distributed by bucket, co-located with `host_state`, so a fold of one
bucket is one shard's statement.

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

ROLES = ("frontier_fetcher", "frontier_poller", "frontier_spider", "frontier_api")

UPGRADE = (
    """
    CREATE TABLE host_deltas (
        bucket           integer NOT NULL DEFAULT 0 CHECK (bucket >= 0),
        -- parallel arrays, one element per host of the batch
        hosts            text[] NOT NULL,
        added            integer[] NOT NULL,      -- URLs the batch inserted
        priority         integer[] NOT NULL,      -- best priority inserted or raised (NULL: none)
        due_at           timestamptz[] NOT NULL,  -- earliest due time of those (NULL: none)
        source_delay_ms  integer[] NOT NULL,      -- the largest source rate limit (NULL: none)
        default_delay_ms integer NOT NULL,        -- a new host's min_delay_ms
        at               timestamptz NOT NULL DEFAULT now()
    )
    """,
    # Rows live for seconds: vacuumed often so the folds' scans stay short.
    """
    ALTER TABLE host_deltas SET (
        autovacuum_vacuum_scale_factor = 0.0,
        autovacuum_vacuum_threshold = 200,
        autovacuum_vacuum_cost_delay = 0
    )
    """,
)

# Every submitter appends and folds (`frontier_fetcher` submits redirect targets and folds
# what an interrupted import left, from its maintenance tick).
GRANT = "GRANT SELECT, INSERT, DELETE ON host_deltas TO {role}"

DISTRIBUTE = (
    "SELECT create_distributed_table('host_deltas', 'bucket', colocate_with => 'host_state')"
)

DOWNGRADE = "DROP TABLE host_deltas"


def has_citus() -> bool:
    found = op.get_bind().execute(
        sa.text("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
    )
    return bool(found.scalar())


def upgrade() -> None:
    for statement in UPGRADE:  # one at a time, as Citus wants them (migration 0022)
        op.execute(statement)
    for role in ROLES:
        op.execute(GRANT.format(role=role))
    if has_citus():
        op.execute(DISTRIBUTE)


def downgrade() -> None:
    # Fold what waits first: dropped, it would leave URLs no claim could find.
    op.execute(
        """
        DO $$
        BEGIN
            IF EXISTS (SELECT 1 FROM host_deltas) THEN
                RAISE EXCEPTION 'host_deltas holds unfolded host summaries: run a fetcher '
                    '(or frontier import of an empty file) to fold them, then downgrade';
            END IF;
        END $$
        """
    )
    op.execute(DOWNGRADE)
