-- One URL's story and one host's or source's state, for `frontier url show`,
-- `GET /api/v1/urls/{...}` and the dashboard's URL, host and source pages. Each reads one
-- row by key or one index range: nothing here scans url_frontier.

-- name: url
-- The url_frontier row of url_hash $1, with its source's name and enabled flag.
SELECT u.url_hash, u.url, u.fetch_url, u.host, u.source_id, s.name AS source_name,
       s.enabled AS source_enabled, u.origin, u.parent_url, u.depth, u.priority, u.status,
       u.next_fetch_at, u.last_fetched_at, u.fetch_count, u.retry_count, u.last_error,
       u.dead_reason, u.final_url, u.http_status, u.content_hash, u.etag, u.last_modified,
       u.claimed_by, u.lease_until, u.discovery_meta, u.discovered_at, u.created_at,
       u.updated_at, u.revisit_step, s.politeness_key AS source_politeness_key
FROM url_frontier u
LEFT JOIN sources s ON s.id = u.source_id
WHERE u.url_hash = $1;

-- name: host
-- The host_state row of host $1 (what politeness, backoff, robots.txt and the lease say;
-- busy_key: the politeness key whose being busy snoozed it, until next_allowed_at).
SELECT host, delay_ms, min_delay_ms, source_delay_ms, crawl_delay_ms, slowdown,
       next_allowed_at, last_fetch_at, backoff_until, consecutive_failures, robots_status,
       robots_txt, robots_fetched_at, robots_ttl_hours, robots_http_status, robots_error,
       robots_retry_at, robots_failures, lease_owner, lease_until, pending_count,
       pending_priority, pending_due_at, ready_at, busy_key
FROM host_state
WHERE host = $1;

-- name: ahead
-- How many pending URLs of host $1 a claim takes before the one of priority $2, due at $3,
-- url_hash $4 (queue.sql `claim`: priority first, then the earliest due; equal ones by
-- hash here), counted up to $5 (an index range of url_frontier_due_idx, bounded).
SELECT count(*)::int
FROM (SELECT 1 FROM url_frontier u
      WHERE u.host = $1 AND u.status = 'pending'
        AND (u.priority > $2 OR (u.priority = $2 AND (u.next_fetch_at, u.url_hash) < ($3, $4)))
      LIMIT $5) a;

-- name: url_log
-- The fetch-log rows of URL $1 (identity spelling), newest first, at most $2 (hash index).
SELECT id, kind, outcome, http_status, elapsed_ms, error, at
FROM fetch_log
WHERE url = $1
ORDER BY at DESC, id DESC
LIMIT $2;

-- name: host_log
-- The newest fetch-log rows ($3 at most) whose URL is on origin $1 or $2 (http and https
-- forms, each ending in '/'), among the newest $4 rows of the log: a bounded walk of the
-- id order, since the log has no host column.
SELECT id, kind, url, outcome, http_status, elapsed_ms, error, at
FROM (SELECT * FROM fetch_log ORDER BY id DESC LIMIT $4) recent
WHERE starts_with(url, $1) OR starts_with(url, $2)
ORDER BY id DESC
LIMIT $3;

-- name: in_flight_on_host
-- URLs of host $1 being fetched now (the lease index holds only fetching rows).
SELECT url_hash, url, claimed_by, lease_until
FROM url_frontier
WHERE status = 'fetching' AND host = $1
ORDER BY lease_until
LIMIT 20;

-- name: source
-- Source $1 (by id) with its poll state.
SELECT s.id, s.name, s.kind, s.config, s.ingestion_mode, s.enabled, s.priority,
       s.base_url, s.feed_url, s.sitemap_url, s.feed_poll_interval_minutes, s.rate_limit_ms,
       s.fetchprotection, s.created_at, s.updated_at,
       f.last_polled_at, f.next_poll_at, f.sitemap_next_poll_at, f.consecutive_errors,
       f.last_error, f.last_outcome, f.last_item_count
FROM sources s
LEFT JOIN feed_state f ON f.source_id = s.id
WHERE s.id = $1;

-- name: source_counts
-- URLs of source $1 by status, from the maintained counters.
SELECT status, sum(n)::bigint AS n
FROM frontier_counts
WHERE source_id = $1
GROUP BY status
HAVING sum(n) <> 0;

-- name: source_log
-- The newest fetch-log rows of source $1 ($2 at most; index on (source_id, at)); with $3,
-- only those with an error.
SELECT id, kind, url, outcome, http_status, elapsed_ms, error, at
FROM fetch_log
WHERE source_id = $1 AND (NOT $3::bool OR error IS NOT NULL)
ORDER BY at DESC, id DESC
LIMIT $2;
