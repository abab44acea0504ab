"""Latency histograms for `GET /metrics`, counted where the fetch log is written.

The fetch log's trigger (migration 0004, rewritten for Citus in 0018) also counts each
row's `elapsed_ms` into `event_counts`: event 'latency' with the row's kind and, as
`outcome`, the upper bound in milliseconds of the histogram bucket it falls in ('inf'
above the last), and event 'latency_ms' whose `n` is the sum of the milliseconds. Every
process that writes the fetch log (fetchers, pollers, the spider) is counted once, in the
database, so one API process serves the histogram of them all; the rows are folded with
the other counters.

Revision ID: 0021
Revises: 0019
Create Date: 2026-11-24
"""

from alembic import op

revision = "0021"
down_revision = "0019"
branch_labels = None
depends_on = None

# frontier.api.metrics.LATENCY_BUCKETS_MS: keep the two lists the same.
BUCKETS_MS = "50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000"

UPGRADE = rf"""
CREATE OR REPLACE FUNCTION event_counts_from_fetch_log() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    events text[];
    kinds text[];
    outcomes text[];
    ns bigint[];
BEGIN
    -- counted from the transition table into arrays first (see migration 0018: on Citus an
    -- INSERT that reads a transition table directly is planned on the workers)
    SELECT array_agg(e), array_agg(kind), array_agg(outcome), array_agg(n)
      INTO events, kinds, outcomes, ns
    FROM (
        SELECT 'log' AS e, kind, outcome, count(*) AS n FROM new_rows GROUP BY 2, 3
        UNION ALL
        SELECT 'latency', kind,
               coalesce((SELECT min(b) FROM unnest(ARRAY[{BUCKETS_MS}]) AS b
                         WHERE b >= elapsed_ms)::text, 'inf'),
               count(*)
        FROM new_rows WHERE elapsed_ms IS NOT NULL GROUP BY 2, 3
        UNION ALL
        SELECT 'latency_ms', kind, '', sum(elapsed_ms)
        FROM new_rows WHERE elapsed_ms IS NOT NULL GROUP BY 2
    ) AS counted;
    INSERT INTO event_counts (event, kind, outcome, n)
    SELECT e, k, o, n FROM unnest(events, kinds, outcomes, ns) AS t(e, k, o, n);
    RETURN NULL;
END $$;
"""

DOWNGRADE = r"""
CREATE OR REPLACE FUNCTION event_counts_from_fetch_log() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    kinds text[];
    outcomes text[];
    ns bigint[];
BEGIN
    SELECT array_agg(kind), array_agg(outcome), array_agg(n) INTO kinds, outcomes, ns
    FROM (SELECT kind, outcome, count(*) AS n FROM new_rows GROUP BY 1, 2) AS counted;
    INSERT INTO event_counts (event, kind, outcome, n)
    SELECT 'log', k, o, n FROM unnest(kinds, outcomes, ns) AS t(k, o, n);
    RETURN NULL;
END $$;
DELETE FROM event_counts WHERE event IN ('latency', 'latency_ms');
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
