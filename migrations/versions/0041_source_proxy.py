"""A source's proxy: the outbound proxy its requests to its own hosts go through
(frontier/proxies.py), as a JSON object (url, username, and where its password is read:
password_env or password_file), never the password itself.

On Citus, `sources` is a reference table: adding a nullable column without a constraint is
propagated as it is.

Revision ID: 0041
Revises: 0040
Create Date: 2026-11-28
"""

from alembic import op

revision = "0041"
down_revision = "0040"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE sources ADD COLUMN proxy jsonb")


def downgrade() -> None:
    op.execute("ALTER TABLE sources DROP COLUMN proxy")
