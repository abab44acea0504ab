-- Read-only views for the HTTP API and the dashboard, and the /metrics event counters.
-- Nothing here counts url_frontier rows: counts come from maintained counters.

-- name: frontier_page
-- One keyset page of url_frontier in url_hash order. Walks at most $2 rows after $1 along
-- the primary key, keeps those matching the filters ($3 status, $4 host, $5 source id) and
-- returns up to $6 of them as `items`, with the last hash walked (`scanned_to`) and how
-- many rows were walked. The walk bound keeps a sparse filter from reading the whole table
-- (no extra index on the hot table); the caller continues after the last hash it reports.
WITH scanned AS MATERIALIZED (
    SELECT url_hash, url, host, source_id, origin, status, priority, depth, next_fetch_at,
           last_fetched_at, fetch_count, retry_count, last_error, dead_reason, http_status,
           final_url, created_at, updated_at
    FROM url_frontier
    WHERE url_hash > $1::bpchar
    ORDER BY url_hash
    LIMIT $2
),
matched AS (
    SELECT m.*, s.name AS source_name
    FROM (
        SELECT * FROM scanned
        WHERE ($3::text IS NULL OR status = $3)
          AND ($4::text IS NULL OR host = $4)
          AND ($5::uuid IS NULL OR source_id = $5)
        ORDER BY url_hash
        LIMIT $6
    ) m
    LEFT JOIN sources s ON s.id = m.source_id
)
SELECT (SELECT max(url_hash) FROM scanned) AS scanned_to,
       (SELECT count(*) FROM scanned) AS scanned,
       coalesce((SELECT jsonb_agg(to_jsonb(m) ORDER BY m.url_hash) FROM matched m),
                '[]'::jsonb) AS items;

-- name: sources_overview
-- Sources with their last poll outcome, failing ones first ($1: rows).
SELECT s.id, s.name, s.ingestion_mode, s.enabled, s.priority, s.feed_url, s.sitemap_url,
       f.last_polled_at, f.last_outcome, f.last_error, f.consecutive_errors, f.next_poll_at
FROM sources s
LEFT JOIN feed_state f ON f.source_id = s.id
ORDER BY (f.last_error IS NOT NULL) DESC, f.consecutive_errors DESC NULLS LAST, s.name
LIMIT $1;

-- name: source_count
SELECT count(*) FROM sources;

-- name: event_totals
-- Cumulative counts of claims, sink errors and fetch-log rows (by kind and outcome).
SELECT event, kind, outcome, sum(n)::bigint AS n
FROM event_counts
GROUP BY 1, 2, 3;

-- name: fold_events
-- Fold event deltas older than $1 into one row per key.
WITH folded AS (
    DELETE FROM event_counts WHERE at < $1
    RETURNING event, kind, outcome, n
)
INSERT INTO event_counts (event, kind, outcome, n, at)
SELECT event, kind, outcome, sum(n), '-infinity'
FROM folded
GROUP BY 1, 2, 3;

-- name: queue_depth
-- URLs by status and origin, from the maintained counters.
SELECT status, origin, sum(n)::bigint AS n
FROM frontier_counts
GROUP BY 1, 2;
