"""Source kinds as plugins: a source names its `kind` (a name registered in the Python
entry-point group `frontier.source_kinds`: `feed`, `sitemap`, `wordpress` ship with
frontier) and its kind's `config` (a JSON object the kind validates). Every existing
source is a feed source with an empty config, which is what it was before.

The column is open to plugins, so it is checked for its form only (a lowercase name), not
against a list; a source whose kind is not installed is a configuration error of that
source, reported by the poller.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23
"""

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        ALTER TABLE sources
            ADD COLUMN kind text NOT NULL DEFAULT 'feed'
                CHECK (kind ~ '^[a-z][a-z0-9_]{0,49}$'),
            ADD COLUMN config jsonb NOT NULL DEFAULT '{}'::jsonb
                CHECK (jsonb_typeof(config) = 'object')
        """
    )


def downgrade() -> None:
    op.execute("ALTER TABLE sources DROP COLUMN config, DROP COLUMN kind")
