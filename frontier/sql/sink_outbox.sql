-- sink_outbox: what the optional sinks have yet to receive (migration 0042,
-- frontier/outbox.py). A row per (sink, idempotency key): a document's version to write
-- (its payload, frontier/sinks/payload.py; NULL when raw_content, a required sink, holds
-- the document: the delivery reads it there) or a URL's document to delete. Written with
-- the completion of the URL (queue.sql's `complete_enqueue`; on Citus in its transaction);
-- claimed for a lease with FOR UPDATE SKIP LOCKED, deleted once the sink has it, put back
-- with a later `next_at` when it failed, kept as `rejected` when the sink refused it for
-- good.

-- name: enqueue
-- Rows to deliver ($1..$5 parallel arrays: sink, key, url_hash, op, payload as JSON text
-- or NULL);
-- one already waiting under the same (sink, key) stays as it is. A row of an older version
-- of the same URL for the same sink, waiting and not leased, is superseded and goes: a
-- retried old version must not reach the sink after the new one. The url_hash is
-- char(64), as the column is: compared as text, the column would be cast and the lookup
-- of the rows to supersede could not use sink_outbox_url_idx (a sequential scan of the
-- whole outbox at every completion, as long as its backlog).
WITH new AS (
    SELECT s, k, h, o, p
    FROM unnest($1::text[], $2::text[], $3::char(64)[], $4::text[], $5::text[])
         AS i(s, k, h, o, p)
),
superseded AS (
    DELETE FROM sink_outbox x
    USING new
    WHERE x.sink = new.s AND x.url_hash = new.h AND x.key <> new.k
      AND (x.lease_until IS NULL OR x.lease_until < now())
)
INSERT INTO sink_outbox (sink, key, url_hash, op, payload)
SELECT s, k, h, o, p
FROM new
ORDER BY s, k
ON CONFLICT (sink, key) DO NOTHING;

-- name: claim
-- Up to $3 rows of sink $1 due at $4 (NULL: the database clock), oldest first, leased
-- to worker $2 for $5 seconds: rows leased to nobody, or whose lease ran out (a dead
-- fetcher's), skipping those another fetcher is claiming now.
WITH due AS (
    SELECT id
    FROM sink_outbox
    WHERE sink = $1 AND NOT rejected
      AND next_at <= coalesce($4::timestamptz, now())
      AND (lease_until IS NULL OR lease_until < coalesce($4::timestamptz, now()))
    ORDER BY next_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
)
UPDATE sink_outbox o
SET leased_by = $2,
    lease_until = coalesce($4::timestamptz, now()) + make_interval(secs => $5::float8)
FROM due
WHERE o.id = due.id
RETURNING o.id, o.key, o.url_hash, o.op, o.payload, o.attempts;

-- name: delivered
-- The sink has these rows ($1 ids) of worker $2: they go.
DELETE FROM sink_outbox WHERE id = ANY ($1::bigint[]) AND leased_by = $2;

-- name: failed
-- The sink could not take these rows ($1 ids) of worker $2: tried again at $3, the error
-- $4 kept (at $5, NULL: the database clock).
UPDATE sink_outbox
SET attempts = attempts + 1, next_at = $3, last_error = $4,
    failed_at = coalesce($5::timestamptz, now()), leased_by = NULL, lease_until = NULL
WHERE id = ANY ($1::bigint[]) AND leased_by = $2;

-- name: rejected
-- The sink refused these rows for good ($1 ids, $3 reasons) of worker $2: kept, not
-- delivered again, for `frontier sinks status` to show.
UPDATE sink_outbox o
SET rejected = true, last_error = r.reason, failed_at = now(), attempts = o.attempts + 1,
    leased_by = NULL, lease_until = NULL
FROM unnest($1::bigint[], $3::text[]) AS r(id, reason)
WHERE o.id = r.id AND o.leased_by = $2;

-- name: status
-- Per sink: rows waiting, the oldest one's creation, rows refused for good, and the
-- latest error with its time.
SELECT sink,
       count(*) FILTER (WHERE NOT rejected) AS backlog,
       min(created_at) FILTER (WHERE NOT rejected) AS oldest_at,
       count(*) FILTER (WHERE rejected) AS rejected,
       (array_agg(last_error ORDER BY failed_at DESC)
            FILTER (WHERE last_error IS NOT NULL))[1] AS last_error,
       max(failed_at) AS last_error_at
FROM sink_outbox
GROUP BY sink
ORDER BY sink;
