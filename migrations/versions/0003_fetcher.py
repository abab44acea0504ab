"""Fetcher state: what a host's robots.txt said beyond its rules (Sitemap: lines, the HTTP
status and error of the last fetch, when a failed fetch is tried again) and a lookup index
for the content sink.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE host_state
    -- Sitemap: lines of the host's robots.txt, for the sitemap poller.
    ADD COLUMN robots_sitemaps text[],
    -- HTTP status of the last robots.txt fetch (null: no answer, e.g. a timeout).
    ADD COLUMN robots_http_status smallint,
    -- Why the last robots.txt fetch failed (null when it did not).
    ADD COLUMN robots_error text,
    -- While robots_status is disallow_all: when robots.txt is fetched again.
    ADD COLUMN robots_retry_at timestamptz,
    -- Consecutive failed robots.txt fetches; the retry delay doubles with each.
    ADD COLUMN robots_failures integer NOT NULL DEFAULT 0 CHECK (robots_failures >= 0);
"""

DOWNGRADE = """
ALTER TABLE host_state
    DROP COLUMN IF EXISTS robots_sitemaps,
    DROP COLUMN IF EXISTS robots_http_status,
    DROP COLUMN IF EXISTS robots_error,
    DROP COLUMN IF EXISTS robots_retry_at,
    DROP COLUMN IF EXISTS robots_failures;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
