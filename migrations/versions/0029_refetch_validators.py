"""Fetching a fetched URL again (issue 35 item 3, issue 36).

`frontier urls requeue --status fetched` and `POST /api/v1/urls/requeue` with
`{"status": "fetched"}` make fetched URLs pending again and drop their validators (ETag,
Last-Modified) so that the server sends the page in full rather than 304, and the new
document replaces a wrong one (queue.sql `requeue`). The API role, which requeues
(migration 0022), may now write those two columns too.

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-27
"""

from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None

VALIDATOR_COLUMNS = "etag, last_modified"


def upgrade() -> None:
    op.execute(f"GRANT UPDATE ({VALIDATOR_COLUMNS}) ON url_frontier TO frontier_api")


def downgrade() -> None:
    op.execute(f"REVOKE UPDATE ({VALIDATOR_COLUMNS}) ON url_frontier FROM frontier_api")
