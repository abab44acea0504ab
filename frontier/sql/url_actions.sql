-- Operator actions on failed and dead URLs (and fetched ones, to requeue them) (`frontier urls requeue|purge`,
-- `POST /api/v1/urls/requeue|purge`), made by frontier.url_actions.UrlActions. A large set
-- is walked in batches by url_hash (a keyset), each batch its own statement, so no lock
-- is held on more than one batch; the filter is written once, here (`matching`), and
-- each action re-checks the status of the rows it changes. Bucket-scoped like queue.sql.

-- name: matching
-- Up to $7 URLs of bucket $8 after url_hash $6 (keyset; '' for the first batch), by
-- url_hash, whose status is in $1 (failed, dead or fetched only), dead reason $2, host $3, source
-- $4, last changed before $5, url_hash $9 (one URL) (NULL: any of each).
SELECT url_hash, url, host, status, dead_reason, last_error, updated_at
FROM url_frontier
WHERE bucket = $8::int AND url_hash > $6::char(64)
  AND status IN ('failed', 'dead', 'fetched') AND status = ANY ($1::text[])
  AND ($2::text IS NULL OR dead_reason = $2::text)
  AND ($3::text IS NULL OR host = $3::text)
  AND ($4::uuid IS NULL OR source_id = $4::uuid)
  AND ($5::timestamptz IS NULL OR updated_at < $5::timestamptz)
  AND ($9::char(64) IS NULL OR url_hash = $9::char(64))
ORDER BY url_hash
LIMIT $7;

-- name: purge
-- Delete the URLs $1 of bucket $3 that are still failed or dead with a status in $2
-- (their frontier_counts follow through the statement trigger). Rows locked by someone
-- else are skipped. Returns how many were deleted.
WITH picked AS (
    SELECT url_hash
    FROM url_frontier
    WHERE bucket = $3::int AND url_hash = ANY ($1::char(64)[])
      AND status IN ('failed', 'dead') AND status = ANY ($2::text[])
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM url_frontier u
    USING picked p
    WHERE u.bucket = $3::int AND u.url_hash = p.url_hash
    RETURNING u.url_hash
)
SELECT count(*) AS purged FROM deleted;
