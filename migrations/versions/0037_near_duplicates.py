"""Near-duplicates (issue 29 item 4; docs/duplicates.md, "Near-duplicates").

`near_duplicates` holds one row per stored document: its MinHash (`frontier.near_duplicates`,
64 32-bit bins of its 3-word shingles), the 16 band values its lookup uses (GIN-indexed,
so the documents sharing a band with a new one are found without reading the others) and
its cluster: the url_hash of the earliest document it is a near-duplicate of (itself when
none). `raw_content` gains `minhash` (the fingerprint, hex) and `near_duplicate_of` (the
cluster, when not itself), so a reader can keep one document per cluster. The documents
stored before this revision have neither: they are nobody's candidate.

On Citus the table is distributed by url_hash (its own co-location group); a lookup by
band values goes to every shard. raw_content stays on the coordinator (migration 0018).

Revision ID: 0037
Revises: 0036
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0037"
down_revision = "0036"
branch_labels = None
depends_on = None

UPGRADE = (
    """
    CREATE TABLE near_duplicates (
        url_hash  char(64) PRIMARY KEY,
        minhash   bytea NOT NULL,
        bands     int[] NOT NULL,
        cluster   char(64) NOT NULL,  -- the earliest document of its cluster (itself)
        stored_at timestamptz NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX near_duplicates_bands_idx ON near_duplicates USING gin (bands)",
    "ALTER TABLE raw_content ADD COLUMN minhash text, ADD COLUMN near_duplicate_of char(64)",
    "GRANT SELECT, INSERT, UPDATE, DELETE ON near_duplicates TO frontier_fetcher",
    "GRANT SELECT ON near_duplicates TO frontier_api",
)
DISTRIBUTE = (
    "SELECT create_distributed_table('near_duplicates', 'url_hash', colocate_with => 'none')"
)


def has_citus() -> bool:
    found = op.get_bind().execute(
        sa.text("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
    )
    return bool(found.scalar())


def upgrade() -> None:
    citus = has_citus()
    for statement in UPGRADE[:2]:  # one at a time, as Citus wants them (migration 0022)
        op.execute(statement)
    if citus:
        op.execute(DISTRIBUTE)
    for statement in UPGRADE[2:]:
        op.execute(statement)


def downgrade() -> None:
    op.execute("ALTER TABLE raw_content DROP COLUMN near_duplicate_of, DROP COLUMN minhash")
    op.execute("DROP TABLE near_duplicates")
