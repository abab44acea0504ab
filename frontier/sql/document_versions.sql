-- document_versions: the earlier versions of each document (migration 0035,
-- frontier/versions.py). The newest version is the document the sink holds.

-- name: keep
-- The documents replaced by a changed text ($1..$10 parallel arrays), each kept as its
-- URL's next version number; then each URL's versions older than its newest $11 go.
WITH latest AS (
    SELECT url_hash, max(version) AS version
    FROM document_versions
    WHERE url_hash = ANY ($1::char(64)[])
    GROUP BY url_hash
),
kept AS (
    INSERT INTO document_versions AS d (url_hash, version, fetched_at, content_hash, title,
                                        body, warc_file, warc_offset, warc_length,
                                        warc_record_id)
    SELECT i.url_hash, coalesce(l.version, 0) + 1, i.fetched_at, i.content_hash, i.title,
           i.body, i.warc_file, i.warc_offset, i.warc_length, i.warc_record_id
    FROM unnest($1::char(64)[], $2::timestamptz[], $3::text[], $4::text[], $5::text[],
                $6::text[], $7::bigint[], $8::bigint[], $9::text[])
         AS i(url_hash, fetched_at, content_hash, title, body, warc_file, warc_offset,
              warc_length, warc_record_id)
    LEFT JOIN latest l USING (url_hash)
    ORDER BY i.url_hash
    ON CONFLICT (url_hash, version) DO NOTHING
    RETURNING d.url_hash, d.version
)
DELETE FROM document_versions d
USING kept k
WHERE d.url_hash = k.url_hash AND d.version <= k.version - $10::int;

-- name: list
-- The earlier versions of URL $1, oldest first, without their text.
SELECT version, fetched_at, content_hash, title, warc_file, warc_offset, warc_length,
       warc_record_id, kept_at, length(body) AS chars
FROM document_versions
WHERE url_hash = $1
ORDER BY version;

-- name: one
-- Version $2 of URL $1, its text included.
SELECT version, fetched_at, content_hash, title, body, warc_file, warc_offset, warc_length,
       warc_record_id, kept_at
FROM document_versions
WHERE url_hash = $1 AND version = $2;

-- name: newest_number
-- The number of URL $1's newest earlier version (NULL: none kept).
SELECT max(version) FROM document_versions WHERE url_hash = $1;
