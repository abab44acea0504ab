-- The discovery spider's state: per-source schedule and run state (spider_state) and the
-- listing pages it has seen (spider_pages). A source's spider options (interval_minutes,
-- allow_external, listing_urls) are its configuration, written by sources.sql.
-- Time-dependent statements take `now`; NULL means the database's clock.

-- name: ensure_states
-- Create the state rows of sources $1 that have none yet.
INSERT INTO spider_state (source_id)
SELECT id FROM unnest($1::uuid[]) AS t(id)
ON CONFLICT (source_id) DO NOTHING;

-- name: ensure_due_states
-- Create state rows for every enabled spider/both source that has none yet.
INSERT INTO spider_state (source_id)
SELECT s.id FROM sources s
WHERE s.enabled AND s.ingestion_mode IN ('spider', 'both')
ORDER BY s.id
ON CONFLICT (source_id) DO NOTHING;

-- name: state
SELECT source_id, interval_minutes, allow_external, listing_urls, spider_next_run_at,
       last_run_at, last_outcome, last_summary
FROM spider_state WHERE source_id = $1;

-- name: claim_due
-- The next run is reckoned in UTC (the same minutes, and `timestamp + interval` is
-- immutable): Citus refuses a STABLE function, such as `timestamptz + interval`, with a
-- column reference in an UPDATE, and spider_state is a reference table there (0018).
-- Take up to $2 enabled spider/both sources whose next run is due; their next run moves
-- a full interval ahead now, so a concurrent `--due` does not take them too.
WITH clock AS (SELECT coalesce($1::timestamptz, now()) AS now),
due AS (
    SELECT st.source_id
    FROM spider_state st
    JOIN sources s ON s.id = st.source_id
    WHERE st.spider_next_run_at <= (SELECT now FROM clock)
      AND s.enabled AND s.ingestion_mode IN ('spider', 'both')
    ORDER BY st.spider_next_run_at, s.name
    LIMIT $2
    FOR UPDATE OF st SKIP LOCKED
)
UPDATE spider_state st
SET spider_next_run_at = (c.now AT TIME ZONE 'UTC' + make_interval(mins => st.interval_minutes))
                         AT TIME ZONE 'UTC',
    updated_at = c.now
FROM due, clock c
WHERE st.source_id = due.source_id AND st.spider_next_run_at <= c.now
RETURNING st.source_id;

-- name: finish_run
-- Record a run that started at $2: its outcome, summary, and the next run an interval
-- after the start (in UTC, as claim_due; the clock in a CTE: Citus refuses a non-immutable
-- function inside a COALESCE in an UPDATE).
WITH clock AS (SELECT coalesce($5::timestamptz, now()) AS now)
UPDATE spider_state
SET last_run_at = $2::timestamptz,
    last_outcome = $3,
    last_summary = $4::jsonb,
    spider_next_run_at = ($2::timestamptz AT TIME ZONE 'UTC' + make_interval(mins => interval_minutes))
                         AT TIME ZONE 'UTC',
    updated_at = c.now
FROM clock c
WHERE source_id = $1;

-- name: pages
-- What the spider knows of source $1's listing pages.
SELECT url, etag, last_modified, links_hash, children, checked_at, changed_at
FROM spider_pages WHERE source_id = $1;

-- name: save_pages
-- Upsert a batch of checked listing pages ($2..$7 parallel arrays). A page whose links did
-- not change keeps its changed_at; an answer without a body ($5 NULL: a 304) keeps the
-- stored links. The caller passes the validators to keep (a 304 may not repeat them).
INSERT INTO spider_pages AS p (source_id, url, etag, last_modified, links_hash, children,
                               checked_at, changed_at)
SELECT $1, t.url, t.etag, t.last_modified, t.links_hash,
       coalesce(string_to_array(t.children, E'\n'), '{}'), c.now, c.now
FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
     AS t(url, etag, last_modified, links_hash, children)
CROSS JOIN (SELECT coalesce($7::timestamptz, now()) AS now) c
ORDER BY t.url
ON CONFLICT (source_id, url) DO UPDATE
SET etag = excluded.etag,
    last_modified = excluded.last_modified,
    links_hash = coalesce(excluded.links_hash, p.links_hash),
    children = CASE WHEN excluded.links_hash IS NULL THEN p.children ELSE excluded.children END,
    checked_at = excluded.checked_at,
    changed_at = CASE WHEN excluded.links_hash IS NULL
                        OR excluded.links_hash = p.links_hash THEN p.changed_at
                 ELSE excluded.changed_at END;
