-- fetch_log: one row per poll or fetch attempt.

-- name: insert_many
INSERT INTO fetch_log (kind, source_id, url, outcome, http_status, items_seen, items_new,
                       elapsed_ms, error, at)
SELECT kind, source_id, url, outcome, http_status, items_seen, items_new, elapsed_ms, error,
       coalesce(at, now())
FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::int[], $6::int[], $7::int[],
            $8::int[], $9::text[], $10::timestamptz[])
     AS t(kind, source_id, url, outcome, http_status, items_seen, items_new, elapsed_ms,
          error, at);

-- name: recent
-- Newest first, keyset-paged by id ($1: rows; $2: ids below this; $3 kind; $4 source).
SELECT l.id, l.kind, l.source_id, s.name AS source_name, l.url, l.outcome, l.http_status,
       l.items_seen, l.items_new, l.elapsed_ms, l.error, l.at
FROM fetch_log l
LEFT JOIN sources s ON s.id = l.source_id
WHERE ($2::bigint IS NULL OR l.id < $2)
  AND ($3::text IS NULL OR l.kind = $3)
  AND ($4::uuid IS NULL OR l.source_id = $4)
ORDER BY l.id DESC
LIMIT $1;

-- name: prune
-- Delete rows older than $1, at most $2 at a time.
DELETE FROM fetch_log
WHERE id IN (SELECT id FROM fetch_log WHERE at < $1 ORDER BY id LIMIT $2);
