-- raw_content: the PostgreSQL content sink, one document per URL keyed by url_hash (the
-- duplicate checks made before storing are document_keys.sql's, in the frontier database,
-- so they hold whichever sink stores the documents).

-- name: upsert_many
-- Insert or replace documents ($1..$33 parallel arrays and $34, sorted by url_hash so concurrent
-- batches lock rows in one order), and each one's search vector (migration 0024: title and
-- body, cut at 100,000 characters; the `search` statement's words are matched against it).
-- $29 (tags) comes as the text of one JSON array a document: unnest cannot take arrays of
-- arrays of different lengths. The paragraphs come as one array of all of them ($34), in
-- the documents' order, and $30 is each document's count: its slice starts where the
-- previous one's ended (the running sum before it).
WITH written AS (
INSERT INTO raw_content AS r (url_hash, url, final_url, source_id, source_name, host, origin,
                              title, body, summary, author, published_at, image_url,
                              language, content_hash, word_count, extractor, http_status,
                              fetched_at, paywalled, warc_file, warc_offset, warc_length,
                              warc_record_id, detected_language, language_confidence,
                              modified_at, section, tags, paragraphs, markdown, minhash,
                              near_duplicate_of)
SELECT d.url_hash, d.url, d.final_url, d.source_id, d.source_name, d.host, d.origin,
       d.title, d.body, d.summary, d.author, d.published_at, d.image_url, d.language,
       d.content_hash, d.word_count, d.extractor, d.http_status, d.fetched_at, d.paywalled,
       d.warc_file, d.warc_offset, d.warc_length, d.warc_record_id, d.detected_language,
       d.language_confidence, d.modified_at, d.section,
       ARRAY(SELECT jsonb_array_elements_text(d.tags::jsonb)),
       coalesce(($34::text[])[d.paragraph_end - d.paragraphs + 1 : d.paragraph_end], '{}'),
       d.markdown, d.minhash, d.near_duplicate_of
FROM (
    SELECT *, (sum(paragraphs) OVER (ORDER BY n))::int AS paragraph_end
    FROM unnest($1::text[], $2::text[], $3::text[], $4::uuid[], $5::text[], $6::text[],
                $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
                $12::timestamptz[], $13::text[], $14::text[], $15::text[], $16::int[],
                $17::text[], $18::int[], $19::timestamptz[], $20::boolean[], $21::text[],
                $22::bigint[], $23::bigint[], $24::text[], $25::text[], $26::real[],
                $27::timestamptz[], $28::text[], $29::text[], $30::int[], $31::text[],
                $32::text[], $33::text[]) WITH ORDINALITY
         AS u (url_hash, url, final_url, source_id, source_name, host, origin, title, body,
               summary, author, published_at, image_url, language, content_hash,
               word_count, extractor, http_status, fetched_at, paywalled, warc_file,
               warc_offset, warc_length, warc_record_id, detected_language,
               language_confidence, modified_at, section, tags, paragraphs, markdown,
               minhash, near_duplicate_of, n)
) AS d
ON CONFLICT (url_hash) DO UPDATE
SET url = excluded.url, final_url = excluded.final_url, source_id = excluded.source_id,
    source_name = excluded.source_name, host = excluded.host, origin = excluded.origin,
    title = excluded.title, body = excluded.body, summary = excluded.summary,
    author = excluded.author, published_at = excluded.published_at,
    image_url = excluded.image_url, language = excluded.language,
    content_hash = excluded.content_hash, word_count = excluded.word_count,
    extractor = excluded.extractor, http_status = excluded.http_status,
    fetched_at = excluded.fetched_at, paywalled = excluded.paywalled,
    warc_file = excluded.warc_file, warc_offset = excluded.warc_offset,
    warc_length = excluded.warc_length, warc_record_id = excluded.warc_record_id,
    detected_language = excluded.detected_language,
    language_confidence = excluded.language_confidence, modified_at = excluded.modified_at,
    section = excluded.section, tags = excluded.tags, paragraphs = excluded.paragraphs,
    markdown = excluded.markdown, minhash = excluded.minhash,
    near_duplicate_of = excluded.near_duplicate_of
RETURNING url_hash, title, body
)
-- The cut is left to `left` only when the text can be longer than it: `left` counts the
-- characters of the whole text (0.05 ms of a 20 KB text, a twentieth of its vector), and a
-- text of at most 100,000 bytes has at most 100,000 characters (octet_length reads the
-- length, not the text).
INSERT INTO raw_content_search AS s (url_hash, search)
SELECT url_hash,
       to_tsvector('simple'::regconfig,
                   CASE WHEN coalesce(octet_length(title), 0) + coalesce(octet_length(body), 0) < 100000
                        THEN coalesce(title, '') || ' ' || coalesce(body, '')
                        ELSE left(coalesce(title, '') || ' ' || coalesce(body, ''), 100000) END)
FROM written
ON CONFLICT (url_hash) DO UPDATE SET search = excluded.search;

-- name: delete_many
-- Remove the documents $1 (duplicates of a document another URL holds) and their vectors.
WITH gone AS (
    DELETE FROM raw_content_search WHERE url_hash = ANY ($1::char(64)[])
)
DELETE FROM raw_content WHERE url_hash = ANY ($1::char(64)[]);

-- name: by_hash
SELECT * FROM raw_content WHERE url_hash = $1;

-- name: documents_by_hashes
-- The stored documents $1 (url_hashes), every field of frontier.sinks.DOCUMENT_FIELDS in
-- its order: what the outbox delivers when its rows hold no payload (frontier.outbox).
-- language_confidence (real) goes through numeric, as in `export_page`: 0.97, not
-- 0.9700000286102295, the value the fetcher wrote (rounded to 4 decimals).
SELECT url_hash, url, final_url, source_id, source_name, host, origin, title, body, summary,
       author, published_at, image_url, language, content_hash, word_count, extractor,
       http_status, fetched_at, paywalled, warc_file, warc_offset, warc_length,
       warc_record_id, detected_language,
       language_confidence::numeric::float8 AS language_confidence, modified_at, section, tags,
       paragraphs, markdown, minhash, near_duplicate_of
FROM raw_content
WHERE url_hash = ANY ($1::char(64)[]);

-- name: health
-- The sink's health: the table is there and this role may read it (one row at most).
SELECT count(*) FROM (SELECT 1 FROM raw_content LIMIT 1) AS one;

-- Reading documents back, newest first, keyset-paged: $1/$2 the (fetched_at, url_hash) of
-- the last document of the previous page ('infinity' and 'g' for the first page: above
-- every row, so no OR); $3 the oldest fetched_at wanted ('-infinity': all); $4 rows; the
-- last parameter, when true, keeps one document per near-duplicate cluster (those naming
-- no earlier one: `near_duplicate_of` is NULL). One
-- statement per index (migration 0019), so a prepared statement's generic plan cannot pick
-- the wrong one. The listed columns leave the body out.

-- name: recent
SELECT url_hash, url, final_url, source_id, source_name, host, origin, title, author,
       published_at, language, word_count, extractor, http_status, fetched_at,
       near_duplicate_of
FROM raw_content
WHERE (fetched_at, url_hash) < ($1::timestamptz, $2::bpchar) AND fetched_at >= $3
  AND ($5::bool IS NOT TRUE OR near_duplicate_of IS NULL)
ORDER BY fetched_at DESC, url_hash DESC
LIMIT $4;

-- name: recent_by_source
-- As `recent`, of source $5 (and of host $6 when not NULL).
SELECT url_hash, url, final_url, source_id, source_name, host, origin, title, author,
       published_at, language, word_count, extractor, http_status, fetched_at,
       near_duplicate_of
FROM raw_content
WHERE source_id = $5 AND ($6::text IS NULL OR host = $6)
  AND (fetched_at, url_hash) < ($1::timestamptz, $2::bpchar) AND fetched_at >= $3
  AND ($7::bool IS NOT TRUE OR near_duplicate_of IS NULL)
ORDER BY fetched_at DESC, url_hash DESC
LIMIT $4;

-- name: recent_by_host
-- As `recent`, of host $5.
SELECT url_hash, url, final_url, source_id, source_name, host, origin, title, author,
       published_at, language, word_count, extractor, http_status, fetched_at,
       near_duplicate_of
FROM raw_content
WHERE host = $5
  AND (fetched_at, url_hash) < ($1::timestamptz, $2::bpchar) AND fetched_at >= $3
  AND ($6::bool IS NOT TRUE OR near_duplicate_of IS NULL)
ORDER BY fetched_at DESC, url_hash DESC
LIMIT $4;

-- name: custom_plans
-- For the rest of this transaction, plan each statement for its own parameters.
SET LOCAL plan_cache_mode = force_custom_plan;

-- name: gin_only
-- For the rest of this transaction, plan with bitmap scans only: a search for a rare word
-- then reads the GIN index, where the planner would otherwise walk fetched_at backwards
-- checking every row's vector until it has a page (3 s on 10^6 rows for a word that
-- matches nothing when the vectors were computed there, bench/RESULTS.md).
SET LOCAL enable_seqscan = off;
SET LOCAL enable_indexscan = off;

-- name: search_estimate
-- The planner's estimate of how many documents match the words $1, from the statistics
-- ANALYZE keeps of the stored vectors (their most common words and their frequencies):
-- planning only, nothing is read. Run with plan_cache_mode = force_custom_plan so the
-- estimate is of these words, not of a generic parameter.
EXPLAIN (FORMAT JSON)
SELECT 1
FROM raw_content_search
WHERE search @@ websearch_to_tsquery('simple'::regconfig, $1);

-- name: search_walk
-- The walk of a search whose words are estimated to match many documents: of the newest
-- $8 documents in the window (`recent`'s keyset $1/$2 and since $3, source $6 and host $7
-- when not NULL), the first $4 whose stored vector matches the words $5. Rows are walked
-- lazily, newest first, so a common word finds its page within a few rows; $8 bounds the
-- walk of words that are common alone but rare together (without it, two such words
-- checked every vector: 4.4 s at 300,000 documents).
SELECT w.*
FROM (
    SELECT r.url_hash, r.url, r.final_url, r.source_id, r.source_name, r.host, r.origin,
           r.title, r.author, r.published_at, r.language, r.word_count, r.extractor,
           r.http_status, r.fetched_at, r.near_duplicate_of
    FROM raw_content r
    WHERE ($6::uuid IS NULL OR r.source_id = $6) AND ($7::text IS NULL OR r.host = $7)
      AND (r.fetched_at, r.url_hash) < ($1::timestamptz, $2::bpchar) AND r.fetched_at >= $3
      AND ($9::bool IS NOT TRUE OR r.near_duplicate_of IS NULL)
    ORDER BY r.fetched_at DESC, r.url_hash DESC
    LIMIT $8
) w
JOIN raw_content_search s ON s.url_hash = w.url_hash
WHERE s.search @@ websearch_to_tsquery('simple'::regconfig, $5)
ORDER BY w.fetched_at DESC, w.url_hash DESC
LIMIT $4;

-- name: search_walk_cut
-- Whether `search_walk` with the same window stopped at its budget $4 rather than at the
-- window's end: true when the window holds more than $4 documents (an index range; no
-- vector is read).
SELECT count(*) > $4
FROM (
    SELECT 1
    FROM raw_content r
    WHERE ($5::uuid IS NULL OR r.source_id = $5) AND ($6::text IS NULL OR r.host = $6)
      AND (r.fetched_at, r.url_hash) < ($1::timestamptz, $2::bpchar) AND r.fetched_at >= $3
    ORDER BY r.fetched_at DESC, r.url_hash DESC
    LIMIT $4 + 1
) walked;

-- name: search_matches
-- How many documents match the words $1, counted up to $2 (under `gin_only`: from the
-- GIN index, reading at most $2 rows).
SELECT count(*)
FROM (
    SELECT 1
    FROM raw_content_search
    WHERE search @@ websearch_to_tsquery('simple'::regconfig, $1)
    LIMIT $2
) matched;

-- name: search
-- As `recent`, of the documents whose title or body holds every word of $5 (web-search
-- syntax: "quoted phrases", -excluded, or), optionally of source $6 and host $7: their
-- stored vectors (`raw_content_search`, GIN-indexed) match. PostgresDocuments runs it
-- under `gin_only`, once `search_matches` found no more matches than its budget (they
-- are read from the index and sorted); words that match many documents are walked
-- instead (`search_walk`).
SELECT r.url_hash, r.url, r.final_url, r.source_id, r.source_name, r.host, r.origin, r.title,
       r.author, r.published_at, r.language, r.word_count, r.extractor, r.http_status,
       r.fetched_at, r.near_duplicate_of
FROM raw_content r
JOIN raw_content_search s ON s.url_hash = r.url_hash
WHERE s.search @@ websearch_to_tsquery('simple'::regconfig, $5)
  AND ($6::uuid IS NULL OR r.source_id = $6) AND ($7::text IS NULL OR r.host = $7)
  AND (r.fetched_at, r.url_hash) < ($1::timestamptz, $2::bpchar) AND r.fetched_at >= $3
  AND ($8::bool IS NOT TRUE OR r.near_duplicate_of IS NULL)
ORDER BY r.fetched_at DESC, r.url_hash DESC
LIMIT $4;

-- Export (frontier.export): every document matching the filters, oldest first, keyset-paged
-- on raw_content_recent_idx (fetched_at, url_hash): $1/$2 the last document of the previous
-- page ($1 the oldest fetched_at wanted, or '-infinity', and '' for the first page); $3 the
-- newest fetched_at exported (the export's start: documents written after it are left to
-- the next export); $4 a source, $5 a host, $6 a language (the detected one, else the
-- declared one, its region ignored: 'en' matches 'en-GB'), each NULL for all; $7 true keeps
-- one document per near-duplicate cluster; $8 rows; $9 true reads the article's text (body,
-- paragraphs, markdown; else NULL, not read from TOAST). The columns are checked against
-- frontier.sinks.schema (tests/integration/test_document_schema.py). language_confidence
-- (real) goes through numeric: its 6 significant digits, 0.97 and not 0.9700000286102295.

-- name: export_page
SELECT url_hash, url, final_url, source_id, source_name, host, origin, title,
       CASE WHEN $9 THEN body END AS body, summary, author, published_at, image_url,
       language, content_hash, word_count, extractor, http_status, fetched_at, paywalled,
       warc_file, warc_offset, warc_length, warc_record_id, detected_language,
       language_confidence::numeric::float8 AS language_confidence, modified_at, section, tags,
       CASE WHEN $9 THEN paragraphs END AS paragraphs,
       CASE WHEN $9 THEN markdown END AS markdown, minhash, near_duplicate_of
FROM raw_content
WHERE (fetched_at, url_hash) > ($1::timestamptz, $2::bpchar) AND fetched_at <= $3
  AND ($4::uuid IS NULL OR source_id = $4)
  AND ($5::text IS NULL OR host = $5)
  AND ($6::text IS NULL OR split_part(lower(coalesce(detected_language, language)), '-', 1) = $6)
  AND ($7::bool IS NOT TRUE OR near_duplicate_of IS NULL)
ORDER BY fetched_at, url_hash
LIMIT $8;
