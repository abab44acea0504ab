-- The WARC archive's tables (migration 0032; frontier/archive/payloads.py).

-- name: originals
-- The response records archived with the payload digests $1: the originals a revisit
-- (identical-payload-digest) refers to.
SELECT payload_digest, record_id, target_uri, warc_date
FROM warc_payloads
WHERE payload_digest = ANY ($1::text[]);

-- name: remember
-- Response records that became documents, by payload digest ($1..$7 parallel arrays); the
-- first one archived stays the original.
INSERT INTO warc_payloads (payload_digest, record_id, target_uri, warc_date, warc_file,
                           warc_offset, warc_length)
SELECT *
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[],
            $7::bigint[])
ORDER BY 1
ON CONFLICT (payload_digest) DO NOTHING;

-- name: forget_files
-- The files $1 are gone (retention): their payloads are no revisit's original any more.
DELETE FROM warc_payloads WHERE warc_file = ANY ($1::text[]);

-- name: count_error
-- A write the disk refused, counted for /metrics (`frontier_archive_errors`) by its errno
-- name $1 ($2 of them).
INSERT INTO event_counts (event, kind, n) VALUES ('archive_error', $1, $2);
