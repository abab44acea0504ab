"""Partial indexes for the dashboard's reads of the fetch log.

The overview reads a few rows of kinds that are rare among the page rows: each source's
last poll, sitemap or spider run (`sources_overview`, `failing_sources`), the last spider
runs (`spider_runs`) and the last errors (`recent_errors`). Through the `(source_id, at)`
and `(at)` indexes, each walked back over the page rows until it found enough of them:
tens of milliseconds at a million fetch-log rows (`bench.api_reads`, bench/RESULTS.md),
and linear in the rows kept. These indexes hold only those rows, so the walk stops at
once; page inserts pay nothing for them beyond testing the predicate.

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-24
"""

from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE INDEX fetch_log_runs_idx ON fetch_log (source_id, at)
    WHERE kind IN ('feed', 'sitemap', 'spider');
CREATE INDEX fetch_log_spider_idx ON fetch_log (at) WHERE kind = 'spider';
CREATE INDEX fetch_log_errors_idx ON fetch_log (at) WHERE error IS NOT NULL;
"""

DOWNGRADE = """
DROP INDEX fetch_log_errors_idx;
DROP INDEX fetch_log_spider_idx;
DROP INDEX fetch_log_runs_idx;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
