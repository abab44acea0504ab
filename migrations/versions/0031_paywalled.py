"""raw_content.paywalled: a document whose page declares its article not free to read
(schema.org `isAccessibleForFree: false`) and whose text is only its teaser (issue 29
item 3; fetcher/extract.py). It is stored, flagged, rather than passed off as the whole
article. Existing documents were stored as whole articles: false.

On Citus raw_content stays a plain table on the coordinator (migration 0018): the column
is added there like any other. Adding a column with a constant default rewrites no rows.

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-27
"""

from alembic import op

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE raw_content ADD COLUMN paywalled boolean NOT NULL DEFAULT false")


def downgrade() -> None:
    op.execute("ALTER TABLE raw_content DROP COLUMN paywalled")
