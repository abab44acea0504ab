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
-- Sources with their last poll, sitemap or spider run, failing ones first ($1: rows).
-- The last run comes from the fetch log (index on (source_id, at)), so a sitemap-only or
-- spider source shows its runs too; feed_state keeps the feed's and the sitemap's error
-- streaks (the longer one is shown), and a failed last spider run counts one.
SELECT s.id, s.name, s.ingestion_mode, s.enabled, s.priority, s.feed_url, s.sitemap_url,
       coalesce(r.at, f.last_polled_at) AS last_polled_at,
       coalesce(r.outcome, f.last_outcome) AS last_outcome,
       CASE WHEN r.at IS NULL THEN coalesce(f.last_error, f.sitemap_last_error)
            ELSE r.error END AS last_error,
       greatest(f.consecutive_errors, f.sitemap_consecutive_errors,
                CASE WHEN r.kind = 'spider' AND r.outcome IN ('failed', 'blocked')
                     THEN 1 ELSE 0 END) AS consecutive_errors,
       f.next_poll_at
FROM sources s
LEFT JOIN feed_state f ON f.source_id = s.id
LEFT JOIN LATERAL (
    SELECT l.at, l.kind, l.outcome, l.error
    FROM fetch_log l
    WHERE l.source_id = s.id AND l.kind IN ('feed', 'sitemap', 'spider')
    ORDER BY l.at DESC
    LIMIT 1
) r ON true
ORDER BY coalesce(coalesce(f.last_error, f.sitemap_last_error) IS NOT NULL
                   OR (r.kind = 'spider' AND r.outcome IN ('failed', 'blocked')), false) DESC,
         consecutive_errors DESC NULLS LAST, s.name
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
    RETURNING bucket, event, kind, outcome, n
)
INSERT INTO event_counts (bucket, event, kind, outcome, n, at)
SELECT bucket, event, kind, outcome, sum(n), '-infinity'
FROM folded
GROUP BY 1, 2, 3, 4;

-- name: queue_depth
-- URLs by status and origin, from the maintained counters.
SELECT status, origin, sum(n)::bigint AS n
FROM frontier_counts
GROUP BY 1, 2;

-- name: metrics_hosts
-- For /metrics, from the host summaries (one row per host, never url_frontier): hosts
-- backing off at $1, and the earliest due time of any pending URL (the queue's lag is
-- $1 minus it, when it is in the past).
SELECT count(*) FILTER (WHERE backoff_until > $1)::bigint AS backing_off,
       min(pending_due_at) AS oldest_due_at
FROM host_state;

-- name: metrics_politeness
-- For /metrics: the hosts whose work is due at $1 but held back by politeness, by reason
-- (in this order: backing off, held by a request in flight, snoozed because their
-- politeness key was busy (`busy_key`: another host of the key had a request in flight or
-- its delay ran), waiting out the delay since the last answer), with the URLs they hold pending and how long the longest-waiting of
-- them has waited for its host (from the host summaries: its earliest due time).
WITH held AS (
    SELECT CASE WHEN backoff_until > $1 THEN 'backoff'
                WHEN lease_until > $1 THEN 'busy'
                WHEN busy_key IS NOT NULL AND next_allowed_at > $1 THEN 'key_busy'
                ELSE 'delay' END AS reason,
           pending_count, pending_due_at
    FROM host_state
    WHERE pending_due_at <= $1 AND ready_at > $1
)
SELECT reason, count(*)::bigint AS hosts, sum(pending_count)::bigint AS urls,
       extract(epoch FROM $1 - min(pending_due_at))::float8 AS longest_wait_s
FROM held
GROUP BY reason;

-- name: failing_sources
-- Enabled sources whose last feed poll, sitemap poll or spider run failed, with the
-- cause (the feed's, else the sitemap's, else the spider run's, from its fetch-log row)
-- and the length of the streak; the longest streak first ($1: rows; NULL: all).
SELECT s.id, s.name, s.ingestion_mode,
       coalesce(f.last_error, f.sitemap_last_error, r.error, sp.last_outcome) AS cause,
       greatest(f.consecutive_errors, f.sitemap_consecutive_errors,
                CASE WHEN sp.last_outcome IN ('failed', 'blocked') THEN 1 ELSE 0 END)
           AS errors,
       greatest(f.last_polled_at, sp.last_run_at) AS last_at
FROM sources s
LEFT JOIN feed_state f ON f.source_id = s.id
LEFT JOIN spider_state sp ON sp.source_id = s.id
LEFT JOIN LATERAL (
    SELECT l.error FROM fetch_log l
    WHERE l.source_id = s.id AND l.kind = 'spider'
    ORDER BY l.at DESC LIMIT 1
) r ON sp.last_outcome IN ('failed', 'blocked')
WHERE s.enabled
  AND (f.consecutive_errors > 0 OR f.sitemap_consecutive_errors > 0
       OR sp.last_outcome IN ('failed', 'blocked'))
ORDER BY errors DESC, s.name
LIMIT $1;

-- name: spider_runs
-- The last $1 spider runs, from the fetch log (kind 'spider', one row per run).
SELECT l.at, s.name AS source, l.outcome, l.items_seen, l.items_new, l.elapsed_ms, l.error
FROM fetch_log l
LEFT JOIN sources s ON s.id = l.source_id
WHERE l.kind = 'spider'
ORDER BY l.at DESC
LIMIT $1;

-- name: hosts_backing_off
-- Hosts backing off at $1, the latest to come back first ($2: rows).
SELECT host, consecutive_failures, backoff_until, pending_count AS pending
FROM host_state
WHERE backoff_until > $1
ORDER BY backoff_until DESC, host
LIMIT $2;
