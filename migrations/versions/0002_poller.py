"""Poller state: feed and sitemap polling columns.

`feed_state` gains what the poller needs beyond the seed columns: the per-source adaptive
interval option and its last computed interval, the floor set by RSS `<ttl>` or
Cache-Control max-age, the discovered sitemap location and its own error count, the
cursors of the last successful polls (they never advance on a failed poll), and why a
source was disabled (a 410). An expression index serves the scheduler's due-source claim.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE feed_state
    ADD COLUMN adaptive_interval          boolean NOT NULL DEFAULT false,
    ADD COLUMN interval_s                 integer CHECK (interval_s > 0),
    ADD COLUMN min_interval_s             integer CHECK (min_interval_s >= 0),
    ADD COLUMN feed_cursor_at             timestamptz,
    ADD COLUMN sitemap_location           text,
    ADD COLUMN sitemap_cursor_at          timestamptz,
    ADD COLUMN sitemap_consecutive_errors integer NOT NULL DEFAULT 0,
    ADD COLUMN sitemap_last_error         text,
    ADD COLUMN discovery_attempted_at     timestamptz,
    ADD COLUMN disabled_reason            text,
    ADD COLUMN disabled_at                timestamptz;
CREATE INDEX feed_state_due_idx ON feed_state (least(next_poll_at, sitemap_next_poll_at));
"""

DOWNGRADE = """
DROP INDEX IF EXISTS feed_state_due_idx;
ALTER TABLE feed_state
    DROP COLUMN IF EXISTS adaptive_interval,
    DROP COLUMN IF EXISTS interval_s,
    DROP COLUMN IF EXISTS min_interval_s,
    DROP COLUMN IF EXISTS feed_cursor_at,
    DROP COLUMN IF EXISTS sitemap_location,
    DROP COLUMN IF EXISTS sitemap_cursor_at,
    DROP COLUMN IF EXISTS sitemap_consecutive_errors,
    DROP COLUMN IF EXISTS sitemap_last_error,
    DROP COLUMN IF EXISTS discovery_attempted_at,
    DROP COLUMN IF EXISTS disabled_reason,
    DROP COLUMN IF EXISTS disabled_at;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
