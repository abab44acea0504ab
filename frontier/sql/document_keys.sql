-- document_keys: which URL holds a content hash or a canonical's article (migration 0027,
-- docs/duplicates.md). Statements name keys, so on Citus each goes to the shards of its keys.

-- name: reserve
-- Reserve keys for URLs about to store their document ($1..$9 parallel arrays, no key
-- twice, sorted by key so concurrent batches lock rows in one order). A key nobody holds
-- is taken; a key held by the same URL is refreshed; a key held by another URL is taken
-- over only when the newcomer is preferred: the URL the holder names as its canonical (and
-- that does not name the holder back); for content keys then the one on its source's own
-- site; then the earlier publication. Else the holder keeps it (the first stored). The
-- ON CONFLICT is the decision: a concurrent reservation of the same key waits for this
-- transaction and then compares with its result. Returns the keys this batch holds, with
-- the URL each was taken from (NULL: none).
INSERT INTO document_keys AS k (key, kind, url_hash, url, host, canonical_claimed, own_host,
                                published_at, reserved_at)
SELECT i.*, now()
FROM unnest($1::char(64)[], $2::text[], $3::char(64)[], $4::text[], $5::text[], $6::text[],
            $7::bool[], $8::timestamptz[])
     AS i(key, kind, url_hash, url, host, canonical_claimed, own_host, published_at)
ORDER BY i.key, i.kind
ON CONFLICT (key, kind) DO UPDATE
SET url_hash = excluded.url_hash, url = excluded.url, host = excluded.host,
    canonical_claimed = excluded.canonical_claimed, own_host = excluded.own_host,
    published_at = excluded.published_at, reserved_at = excluded.reserved_at,
    -- A holder refreshing its key keeps the previous holder it has not relinked yet.
    previous_url_hash = CASE WHEN k.url_hash = excluded.url_hash THEN k.previous_url_hash
                             ELSE k.url_hash END,
    previous_url = CASE WHEN k.url_hash = excluded.url_hash THEN k.previous_url
                        ELSE k.url END,
    previous_host = CASE WHEN k.url_hash = excluded.url_hash THEN k.previous_host
                         ELSE k.host END
WHERE k.url_hash = excluded.url_hash
   OR CASE
          WHEN k.canonical_claimed = excluded.url
               AND excluded.canonical_claimed IS DISTINCT FROM k.url THEN true
          WHEN excluded.canonical_claimed = k.url OR k.kind = 'canonical' THEN false
          WHEN excluded.own_host <> k.own_host THEN excluded.own_host
          ELSE coalesce(excluded.published_at < k.published_at, false)
      END
RETURNING k.key, k.kind, k.previous_url_hash, k.previous_url, k.previous_host;

-- name: holders
-- Who holds the keys ($1 keys, $2 kinds): key, kind, url_hash, url.
SELECT k.key, k.kind, k.url_hash, k.url
FROM unnest($1::char(64)[], $2::text[]) AS i(key, kind)
JOIN document_keys k ON k.key = i.key AND k.kind = i.kind;

-- name: release
-- Give up the keys ($1 keys, $2 kinds) held by the URLs $3 (a URL that reserved and then
-- did not store its document).
DELETE FROM document_keys k
USING unnest($1::char(64)[], $2::text[], $3::char(64)[]) AS i(key, kind, url_hash)
WHERE k.key = i.key AND k.kind = i.kind AND k.url_hash = i.url_hash;

-- name: relinked
-- The previous holders of keys ($1 keys, $2 kinds) that the URLs $3 hold are relinked:
-- forget them.
UPDATE document_keys k
SET previous_url_hash = NULL, previous_url = NULL, previous_host = NULL
FROM unnest($1::char(64)[], $2::text[], $3::char(64)[]) AS i(key, kind, url_hash)
WHERE k.key = i.key AND k.kind = i.kind AND k.url_hash = i.url_hash;

-- name: forget
-- The URLs $1 hold no document any more (each a duplicate of another): their keys go.
DELETE FROM document_keys WHERE url_hash = ANY ($1::char(64)[]);

-- name: forget_stale_content
-- The URLs $1 now store a document with content hash $2: the content keys they held for
-- an earlier text go.
DELETE FROM document_keys k
USING unnest($1::char(64)[], $2::char(64)[]) AS i(url_hash, content_hash)
WHERE k.url_hash = i.url_hash AND k.kind = 'content' AND k.key <> i.content_hash;
