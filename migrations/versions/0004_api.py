"""API state: maintained event counters behind `GET /metrics`.

`event_counts` holds cumulative counts of claims, sink errors and fetch-log rows by kind and
outcome. Statement triggers append one delta row per statement (insert-only, like
`frontier_counts`, so concurrent writers never wait on a counter row); the API folds old
deltas into one row per key when it is scraped. Cost on the hot path: one small insert per
claim/complete statement (via the `frontier_counts` trigger) and per fetch-log batch.

No index is added to `url_frontier`: `GET /api/v1/frontier` pages by its primary key.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

UPGRADE = r"""
-- Cumulative event counters for /metrics, as insert-only deltas folded on read.
-- event: 'claim' (a URL moved into fetching), 'sink_error' (a URL moved into failed),
-- 'log' (a fetch_log row; kind and outcome say which).
CREATE TABLE event_counts (
    event   text NOT NULL,
    kind    text NOT NULL DEFAULT '',
    outcome text NOT NULL DEFAULT '',
    n       bigint NOT NULL,
    at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_counts_at_idx ON event_counts (at);
ALTER TABLE event_counts SET (
    autovacuum_vacuum_scale_factor = 0.0,
    autovacuum_vacuum_threshold = 1000
);

-- Positive deltas into `fetching` are claims, into `failed` sink errors. Folded rows of
-- frontier_counts (at = -infinity) are not new events.
CREATE FUNCTION event_counts_from_frontier() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_counts (event, n)
    SELECT CASE status WHEN 'fetching' THEN 'claim' ELSE 'sink_error' END, sum(n)
    FROM new_rows
    WHERE n > 0 AND status IN ('fetching', 'failed') AND at > '-infinity'
    GROUP BY 1;
    RETURN NULL;
END $$;

CREATE FUNCTION event_counts_from_fetch_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_counts (event, kind, outcome, n)
    SELECT 'log', kind, outcome, count(*) FROM new_rows GROUP BY 2, 3;
    RETURN NULL;
END $$;

CREATE TRIGGER event_counts_from_frontier AFTER INSERT ON frontier_counts
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION event_counts_from_frontier();
CREATE TRIGGER event_counts_from_fetch_log AFTER INSERT ON fetch_log
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION event_counts_from_fetch_log();
"""

DOWNGRADE = """
DROP TRIGGER IF EXISTS event_counts_from_fetch_log ON fetch_log;
DROP TRIGGER IF EXISTS event_counts_from_frontier ON frontier_counts;
DROP FUNCTION IF EXISTS event_counts_from_fetch_log();
DROP FUNCTION IF EXISTS event_counts_from_frontier();
DROP TABLE IF EXISTS event_counts;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
