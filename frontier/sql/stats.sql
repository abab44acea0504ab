-- Read-only views of the frontier for `frontier status` and the API. None of them scans
-- url_frontier: counts come from the maintained frontier_counts deltas and host_state.

-- name: counts
-- Rows of (source name, origin, status, n) from the maintained counters.
SELECT s.name AS source, c.origin, c.status, sum(c.n)::bigint AS n
FROM frontier_counts c
LEFT JOIN sources s ON s.id = c.source_id
GROUP BY 1, 2, 3
HAVING sum(c.n) <> 0;

-- name: hosts
-- Host-level figures: known hosts, hosts claimable now, pending URLs on hosts whose
-- earliest pending URL is due, and the earliest due time of any pending URL.
SELECT count(*) AS known,
       count(*) FILTER (WHERE ready_at <= $1) AS ready_now,
       coalesce(sum(pending_count) FILTER (WHERE pending_due_at <= $1), 0)::bigint AS due_now,
       min(pending_due_at) AS oldest_due_at
FROM host_state;

-- name: top_hosts
SELECT host, pending_count AS pending, consecutive_failures
FROM host_state
WHERE pending_count > 0
ORDER BY pending_count DESC, host
LIMIT $1;

-- name: claims_since
-- URLs moved into `fetching` since $1 (counter deltas are kept uncompacted for a while).
SELECT coalesce(sum(n), 0)::bigint
FROM frontier_counts
WHERE status = 'fetching' AND n > 0 AND at >= $1;

-- name: compact_counts
-- Fold counter deltas older than $1 into one row per key.
WITH folded AS (
    DELETE FROM frontier_counts WHERE at < $1
    RETURNING bucket, source_id, origin, status, n
)
INSERT INTO frontier_counts (bucket, source_id, origin, status, n, at)
SELECT bucket, source_id, origin, status, sum(n), '-infinity'
FROM folded
GROUP BY 1, 2, 3, 4
HAVING sum(n) <> 0;

-- name: recent_errors
SELECT at, kind, url, outcome, http_status, error
FROM fetch_log
WHERE error IS NOT NULL
ORDER BY at DESC
LIMIT $1;

-- name: throughput
-- fetch_log rows per minute in [$1, $2), by kind and outcome (the `at` index bounds it).
SELECT date_trunc('minute', at) AS minute, kind, outcome, count(*)::bigint AS n
FROM fetch_log
WHERE at >= $1 AND at < $2
GROUP BY 1, 2, 3;

-- name: top_error_hosts
-- Hosts with the most consecutive failed attempts right now ($1: rows).
SELECT host, consecutive_failures, backoff_until, pending_count AS pending
FROM host_state
WHERE consecutive_failures > 0
ORDER BY consecutive_failures DESC, host
LIMIT $1;

-- name: revisits
-- Revisits waiting (pending URLs that were fetched before: revisit_step > 0) and those
-- due at $1: the partial index url_frontier_revisit_idx holds exactly these rows.
SELECT count(*) AS waiting, count(*) FILTER (WHERE next_fetch_at <= $1) AS due_now
FROM url_frontier
WHERE status = 'pending' AND revisit_step > 0;

-- name: fetch_outcomes
-- Page fetches by outcome since the start, first fetches (`page`) apart from revisits,
-- from the fetch log's maintained counters (event_counts).
SELECT kind, outcome, sum(n)::bigint AS n
FROM event_counts
WHERE event = 'log' AND kind IN ('page', 'revisit')
GROUP BY 1, 2
HAVING sum(n) <> 0;
