"""The API manages a source's whole configuration, spider options included: a source
created or changed through `/api/v1/sources` may set `spider_interval_minutes`,
`spider_allow_external` and `spider_listing_urls`, which live in `spider_state`
(frontier/sql/sources.sql), and the API shows them. So `frontier_api` may read, insert and
update `spider_state` rows (never delete them: they go with their source).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("GRANT SELECT, INSERT, UPDATE ON spider_state TO frontier_api")


def downgrade() -> None:
    op.execute("REVOKE SELECT, INSERT, UPDATE ON spider_state FROM frontier_api")
