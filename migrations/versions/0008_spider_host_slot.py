"""The spider takes the fetchers' per-host request slot (frontier/sql/hosts.sql
`take_slot`): before each request it moves the host's `next_allowed_at` past it, creating
the host's row if missing. So `frontier_spider` may insert `host_state` rows with
`next_allowed_at` and their timestamps, and update `next_allowed_at` and `updated_at`
(no other column: backoff, leases and robots.txt stay the fetchers').

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

COLUMNS = "(next_allowed_at, created_at, updated_at)"


def upgrade() -> None:
    op.execute(
        f"GRANT INSERT {COLUMNS}, UPDATE (next_allowed_at, updated_at) "
        "ON host_state TO frontier_spider"
    )


def downgrade() -> None:
    op.execute(
        f"REVOKE INSERT {COLUMNS}, UPDATE (next_allowed_at, updated_at) "
        "ON host_state FROM frontier_spider"
    )
