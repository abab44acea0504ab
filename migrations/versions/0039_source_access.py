"""A source's access: HTTP credentials, extra headers and cookies its requests carry to
its own origins (frontier/source_access.py), as a JSON object of references to where the
secrets are read (environment variables, files), never the secrets themselves.

On Citus, `sources` is a reference table: adding a nullable column without a constraint is
propagated as it is.

Revision ID: 0039
Revises: 0038
Create Date: 2026-11-27
"""

from alembic import op

revision = "0039"
down_revision = "0038"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE sources ADD COLUMN access jsonb")


def downgrade() -> None:
    op.execute("ALTER TABLE sources DROP COLUMN access")
