"""Acting on failures and revisiting what changes (issue 16 items 3-4).

- `sources.revisit`: a source's revisit schedule, in seconds (NULL: none). Each step is
  counted from the fetch before it: `[3600, 21600]` revisits an article 1 h after its first
  fetch and 6 h after that one (frontier/revisits.py). At most 20 steps, each between a
  minute and a year.
- `url_frontier.revisit_step`: how many steps of its source's schedule a URL has taken. A
  fetch that leaves steps to take puts the URL back to `pending`, due at the next step, so
  the claim finds it through the same partial index as any pending URL and the host's
  pending summary learns it has work due then (queue.sql `complete`). A pending row with
  `revisit_step > 0` is a revisit waiting; the partial index counts the due ones for
  `frontier status` and `/api/v1/stats` without reading the frontier.
- `fetch_log.kind` gains `revisit`: a fetch of an article already fetched, on its source's
  schedule, is logged apart from first fetches, so its outcomes (`ok`: changed and
  stored again; `not_modified`: a 304 or the same text) are counted apart in
  `event_counts` (`frontier status`, `/api/v1/stats`).
- The API role requeues and purges failed and dead URLs (`POST /api/v1/urls/requeue`,
  `/purge`, and `POST /api/v1/import?requeue=true`): UPDATE of the columns a requeue
  resets, DELETE on url_frontier.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-24
"""

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

# The columns url_actions.sql `requeue` writes, besides updated_at (granted to every
# submitter by 0006, so not revoked here).
REQUEUE_COLUMNS = "status, dead_reason, retry_count, last_error, next_fetch_at, revisit_step"

UPGRADE = f"""
ALTER TABLE sources ADD COLUMN revisit integer[];
ALTER TABLE sources ADD CONSTRAINT sources_revisit_check CHECK (
        revisit IS NULL
        OR (cardinality(revisit) BETWEEN 1 AND 20
            AND 60 <= ALL (revisit) AND 31536000 >= ALL (revisit)));
ALTER TABLE url_frontier ADD COLUMN revisit_step smallint NOT NULL DEFAULT 0;
ALTER TABLE url_frontier ADD CONSTRAINT url_frontier_revisit_step_check
    CHECK (revisit_step >= 0);
CREATE INDEX url_frontier_revisit_idx ON url_frontier (bucket, next_fetch_at)
    WHERE status = 'pending' AND revisit_step > 0;
ALTER TABLE fetch_log DROP CONSTRAINT fetch_log_kind_check;
ALTER TABLE fetch_log ADD CONSTRAINT fetch_log_kind_check
    CHECK (kind IN ('feed', 'sitemap', 'robots', 'page', 'spider', 'revisit')) NOT VALID;
ALTER TABLE fetch_log VALIDATE CONSTRAINT fetch_log_kind_check;
GRANT UPDATE ({REQUEUE_COLUMNS}) ON url_frontier TO frontier_api;
GRANT DELETE ON url_frontier TO frontier_api;
"""

DOWNGRADE = f"""
REVOKE DELETE ON url_frontier FROM frontier_api;
REVOKE UPDATE ({REQUEUE_COLUMNS}) ON url_frontier FROM frontier_api;
DELETE FROM fetch_log WHERE kind = 'revisit';
ALTER TABLE fetch_log DROP CONSTRAINT fetch_log_kind_check;
ALTER TABLE fetch_log ADD CONSTRAINT fetch_log_kind_check
    CHECK (kind IN ('feed', 'sitemap', 'robots', 'page', 'spider'));
DROP INDEX url_frontier_revisit_idx;
ALTER TABLE url_frontier DROP COLUMN revisit_step;
ALTER TABLE sources DROP COLUMN revisit;
"""


def _each(script: str) -> None:
    # One statement at a time: on Citus, DDL on a distributed or reference table is
    # propagated to the workers only as a query of its own ("cannot insert multiple
    # commands into a prepared statement" otherwise); and a column is added apart from
    # its CHECK, which Citus refuses in one ADD COLUMN.
    for statement in script.split(";\n"):
        if statement.strip():
            op.execute(statement)


def upgrade() -> None:
    _each(UPGRADE)


def downgrade() -> None:
    _each(DOWNGRADE)
