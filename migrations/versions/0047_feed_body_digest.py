"""A poll's document digest: `feed_state.last_body_digest`, the SHA-256 of the body of the
source's main document the last time it was read (a feed, a sitemap kind's top document,
a WordPress API's first page).

A server that sends no validators (ETag, Last-Modified) answers every poll with the whole
document, and the poller parsed it every time, in a process of its own (issue 35), to find
the same entries. A body whose digest is the stored one is now as good as a 304: not
parsed, the poll's outcome `not_modified`. On Citus feed_state is a reference table, and
the column is added on every node as any other.

Revision ID: 0047
Revises: 0046
Create Date: 2026-11-28
"""

from alembic import op

revision = "0047"
down_revision = "0046"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # the column, then its check: Citus refuses an ADD COLUMN that carries a constraint
    op.execute("ALTER TABLE feed_state ADD COLUMN last_body_digest text")
    op.execute(
        "ALTER TABLE feed_state ADD CONSTRAINT feed_state_last_body_digest_check "
        "CHECK (length(last_body_digest) = 64)"
    )


def downgrade() -> None:
    op.execute("ALTER TABLE feed_state DROP COLUMN IF EXISTS last_body_digest")
