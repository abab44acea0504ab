"""The near-duplicate band index without a pending list (docs/duplicates.md,
"Near-duplicates").

A GIN index's fast update (on by default) appends each new row's keys to a pending list
that every lookup reads through in full and that an insert or a vacuum later merges into
the index. It pays off for keys many rows share; the band values of `near_duplicates` are
nearly unique, so the merge saves nothing, and a document costs its 16 keys twice plus
the lookups' scans of the list. Inserted directly, a batch's `record` took half the
PostgreSQL CPU (bench/RESULTS.md, "near-duplicates and PostgreSQL").

On Citus, the statement is propagated to the shards' indexes.

Revision ID: 0038
Revises: 0037
Create Date: 2026-11-27
"""

from alembic import op

revision = "0038"
down_revision = "0037"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER INDEX near_duplicates_bands_idx SET (fastupdate = off)")
    # the rows already pending go into the index now, not at the next vacuum
    op.execute("SELECT gin_clean_pending_list('near_duplicates_bands_idx'::regclass)")


def downgrade() -> None:
    op.execute("ALTER INDEX near_duplicates_bands_idx RESET (fastupdate)")
