-- raw_content: the PostgreSQL content sink, one document per URL keyed by url_hash; and
-- the duplicate-content check the fetcher makes before storing (against url_frontier's
-- content_hash index, so it works whichever sink holds the documents).

-- name: upsert_many
-- Insert or replace documents ($1..$19 parallel arrays, sorted by url_hash so concurrent
-- batches lock rows in one order).
INSERT INTO raw_content AS r (url_hash, url, final_url, source_id, source_name, host, origin,
                              title, body, summary, author, published_at, image_url,
                              language, content_hash, word_count, extractor, http_status,
                              fetched_at)
SELECT *
FROM unnest($1::text[], $2::text[], $3::text[], $4::uuid[], $5::text[], $6::text[],
            $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
            $12::timestamptz[], $13::text[], $14::text[], $15::text[], $16::int[],
            $17::text[], $18::int[], $19::timestamptz[])
ON CONFLICT (url_hash) DO UPDATE
SET url = excluded.url, final_url = excluded.final_url, source_id = excluded.source_id,
    source_name = excluded.source_name, host = excluded.host, origin = excluded.origin,
    title = excluded.title, body = excluded.body, summary = excluded.summary,
    author = excluded.author, published_at = excluded.published_at,
    image_url = excluded.image_url, language = excluded.language,
    content_hash = excluded.content_hash, word_count = excluded.word_count,
    extractor = excluded.extractor, http_status = excluded.http_status,
    fetched_at = excluded.fetched_at;

-- name: indexed_elsewhere
-- Of the (url_hash $1, content_hash $2) pairs, those whose content is already stored
-- under another URL (a fetched url_frontier row with the same content_hash).
SELECT i.url_hash, min(u.url) AS original
-- char(64)[] like the columns, so the join uses the content_hash index.
FROM unnest($1::char(64)[], $2::char(64)[]) AS i(url_hash, content_hash)
JOIN url_frontier u ON u.content_hash = i.content_hash
WHERE u.url_hash <> i.url_hash AND u.status = 'fetched'
GROUP BY i.url_hash;

-- name: by_hash
SELECT * FROM raw_content WHERE url_hash = $1;

-- name: frontier_statuses
-- Of the url_hashes $1, those in the frontier: url_hash, url, status.
SELECT url_hash, url, status
FROM url_frontier
WHERE url_hash = ANY($1::char(64)[]);
