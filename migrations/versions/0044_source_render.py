"""A source's `render` (never, auto, always): whether its pages are rendered again in a
headless browser when their HTML is a client-side app's shell (fetcher/render_signs.py,
docs/fetching.md "Rendering in a browser").

On Citus, `sources` is a reference table: a column with a constant default and no
constraint is propagated as it is. The values are the source schema's to check
(frontier/source_schema.py), as for `politeness_key`.

Revision ID: 0044
Revises: 0043
Create Date: 2026-11-28
"""

from alembic import op

revision = "0044"
down_revision = "0043"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE sources ADD COLUMN render text NOT NULL DEFAULT 'never'")


def downgrade() -> None:
    op.execute("ALTER TABLE sources DROP COLUMN render")
