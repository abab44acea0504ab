-- feed_state: the poller's per-source polling state, its due-source claim and leases.
-- Nothing here writes `sources` (nor a source's configured adaptive_interval): that is
-- SourceRepository's, in sources.sql.

-- name: claim_due
-- Lock up to $1 due sources at time $2 (NULL: now()), for `lease_sources` to lease in the
-- same transaction. At most $3 sources of one poll key (host, or host + first path segment
-- for the proxy hosts in $4) are leased at once, counting leases already held; picks go
-- round the keys (every key's first source, then every key's second) so hosts are
-- spread, not clustered. Callers
-- serialise claims with the advisory lock below, so the per-key count holds across
-- processes; SKIP LOCKED keeps a claim from waiting on a row another claim holds.
WITH clock AS (SELECT coalesce($2::timestamptz, now()) AS now),
due AS (
    SELECT f.source_id, least(f.next_poll_at, f.sitemap_next_poll_at) AS due_at,
           coalesce(f.poll_lease_until > c.now, false) AS leased,
           coalesce(s.feed_url, s.base_url, s.sitemap_url, s.config ->> 'url') AS url
    FROM feed_state f
    JOIN sources s ON s.id = f.source_id
    CROSS JOIN clock c
    WHERE least(f.next_poll_at, f.sitemap_next_poll_at) <= c.now
      AND s.enabled AND s.name <> 'manual' AND s.ingestion_mode IN ('feed', 'both')
      -- a kind other than feed may take its URL from its config, or have none (then it
      -- is polled to report, say, that it is not installed)
      AND (coalesce(s.feed_url, s.base_url, s.sitemap_url) IS NOT NULL OR s.kind <> 'feed')
),
keyed AS (
    SELECT d.*,
           CASE WHEN split_part(h.host, ':', 1) = ANY($4::text[])
                THEN h.host || '/' || coalesce(
                    substring(d.url from '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]+/([^/?#]*)'), '')
                ELSE h.host END AS poll_key
    FROM due d,
         -- the host: what follows the scheme's "://" up to the first / ? or #. The string
         -- functions give an http(s) URL's (every due source's: a claim reads each one)
         -- as the regular expression does, at a third of its cost; any other goes to it.
         LATERAL (SELECT lower(CASE
             WHEN d.url LIKE 'http://%' OR d.url LIKE 'https://%'
             THEN nullif(split_part(split_part(split_part(
                      substr(d.url, strpos(d.url, '://') + 3), '/', 1), '?', 1), '#', 1), '')
             ELSE substring(d.url from '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]+)')
         END) AS host) h
),
busy AS (SELECT poll_key, count(*) AS n FROM keyed WHERE leased GROUP BY poll_key),
ranked AS (
    SELECT k.source_id, k.due_at,
           row_number() OVER (PARTITION BY k.poll_key ORDER BY k.due_at, k.source_id)
               + coalesce(b.n, 0) AS slot
    FROM keyed k LEFT JOIN busy b USING (poll_key)
    WHERE NOT k.leased
),
picked AS (
    SELECT source_id FROM ranked WHERE slot <= $3 ORDER BY slot, due_at LIMIT $1
)
SELECT f.source_id FROM feed_state f JOIN picked p USING (source_id) CROSS JOIN clock c
WHERE f.poll_lease_until IS NULL OR f.poll_lease_until <= c.now
FOR UPDATE OF f SKIP LOCKED;

-- name: seconds_until_due
-- Seconds from $1 (NULL: now()) until the next source is due that nobody holds (negative:
-- one is due already); NULL when none is. The poller's next look (frontier.loops
-- `sooner`): it wakes when a source is due instead of at its next tick. The conditions
-- are `claim_due`'s, and feed_state_due_idx serves the order.
WITH clock AS (SELECT coalesce($1::timestamptz, now()) AS now)
SELECT extract(epoch FROM least(f.next_poll_at, f.sitemap_next_poll_at) - c.now)::float8
    AS seconds
FROM feed_state f
JOIN sources s ON s.id = f.source_id
CROSS JOIN clock c
WHERE s.enabled AND s.name <> 'manual' AND s.ingestion_mode IN ('feed', 'both')
  AND (coalesce(s.feed_url, s.base_url, s.sitemap_url) IS NOT NULL OR s.kind <> 'feed')
  AND (f.poll_lease_until IS NULL OR f.poll_lease_until <= c.now)
  AND least(f.next_poll_at, f.sitemap_next_poll_at) IS NOT NULL
ORDER BY least(f.next_poll_at, f.sitemap_next_poll_at)
LIMIT 1;

-- name: polled_urls
-- The URL of every source the poller polls (claim_due's conditions, due or not): the
-- poller spreads each host's sources over their interval (poller.spread).
SELECT s.id, coalesce(s.feed_url, s.base_url, s.sitemap_url, s.config ->> 'url') AS url
FROM sources s
WHERE s.enabled AND s.name <> 'manual' AND s.ingestion_mode IN ('feed', 'both');

-- name: lease_sources
-- Lease sources $1, locked by `claim_due` in this transaction, to $2 for $3 seconds from
-- $4 (NULL: now()). (A statement of its own: on Citus, where feed_state is a reference
-- table, the two in one statement meet a Citus bug, deploy/README.md.)
WITH clock AS (SELECT coalesce($4::timestamptz, now()) AS now)
UPDATE feed_state f
SET poll_lease_until = frontier_after(c.now, $3), poll_lease_owner = $2
FROM clock c
WHERE f.source_id = ANY ($1::uuid[])
RETURNING f.*;

-- name: claim_lock
-- Serialises claims (held to the end of the claim's transaction).
SELECT pg_advisory_xact_lock(hashtext('frontier.poller.claim_due'));

-- name: state_by_source
SELECT * FROM feed_state WHERE source_id = $1;

-- name: complete_many
-- Write the outcome of polls and free their leases, only where $2 still holds the lease.
UPDATE feed_state f
SET feed_url = t.feed_url,
    last_polled_at = t.last_polled_at,
    last_etag = t.last_etag,
    last_modified = t.last_modified,
    last_item_count = t.last_item_count,
    consecutive_errors = t.consecutive_errors,
    last_error = t.last_error,
    next_poll_at = t.next_poll_at,
    sitemap_next_poll_at = t.sitemap_next_poll_at,
    sitemap_etag = t.sitemap_etag,
    sitemap_last_modified = t.sitemap_last_modified,
    last_outcome = t.last_outcome,
    interval_s = t.interval_s,
    min_interval_s = t.min_interval_s,
    feed_cursor_at = t.feed_cursor_at,
    sitemap_location = t.sitemap_location,
    sitemap_cursor_at = t.sitemap_cursor_at,
    sitemap_consecutive_errors = t.sitemap_consecutive_errors,
    sitemap_last_error = t.sitemap_last_error,
    discovery_attempted_at = t.discovery_attempted_at,
    last_body_digest = t.last_body_digest,
    poll_lease_until = NULL,
    poll_lease_owner = NULL
FROM unnest($1::uuid[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::int[],
            $8::int[], $9::text[], $10::timestamptz[], $11::timestamptz[], $12::text[],
            $13::text[], $14::text[], $15::int[], $16::int[], $17::timestamptz[], $18::text[],
            $19::timestamptz[], $20::int[], $21::text[], $22::timestamptz[], $23::text[])
     AS t(source_id, feed_url, last_polled_at, last_etag, last_modified, last_item_count,
          consecutive_errors, last_error, next_poll_at, sitemap_next_poll_at, sitemap_etag,
          sitemap_last_modified, last_outcome, interval_s, min_interval_s, feed_cursor_at,
          sitemap_location, sitemap_cursor_at, sitemap_consecutive_errors,
          sitemap_last_error, discovery_attempted_at, last_body_digest)
WHERE f.source_id = t.source_id AND f.poll_lease_owner = $2
RETURNING f.source_id;

-- name: release
-- Give a lease back untouched (the poll could not run).
UPDATE feed_state SET poll_lease_until = NULL, poll_lease_owner = NULL
WHERE source_id = ANY($1::uuid[]) AND poll_lease_owner = $2;

-- name: fire_claim
-- Take source $1 for a manual fire at $2 (NULL: now()): only if its last real fire is at
-- least $3 seconds ago and no poll holds it; the lease lasts $4 seconds, owned by $5.
WITH clock AS (SELECT coalesce($2::timestamptz, now()) AS now),
claimed AS (
    UPDATE feed_state f
    SET last_fired_at = c.now, poll_lease_until = frontier_after(c.now, $4),
        poll_lease_owner = $5
    FROM clock c
    WHERE f.source_id = $1
      AND (f.last_fired_at IS NULL OR f.last_fired_at <= frontier_after(c.now, -$3::float8))
      AND (f.poll_lease_until IS NULL OR f.poll_lease_until <= c.now)
    RETURNING f.source_id
)
SELECT f.last_fired_at, f.poll_lease_until, c.now,
       EXISTS (SELECT 1 FROM claimed) AS claimed
FROM feed_state f CROSS JOIN clock c
WHERE f.source_id = $1;
