-- near_duplicates: every stored document's MinHash and its LSH band values, and the
-- cluster it belongs to (migration 0037; docs/duplicates.md, "Near-duplicates";
-- frontier/near_duplicates.py computes them). In the frontier database, so it holds
-- whichever sink stores the documents.

-- name: gin_only
-- For the rest of this transaction, no sequential scan: the planner cannot estimate how
-- few rows share a band value (each is nearly unique; its array statistics keep the most
-- common ones only), guesses most of the table for a batch's 512 values and reads every
-- row (50 s at 10^6 documents), where the GIN index answers in milliseconds
-- (bench/RESULTS.md, "Near-duplicates").
SET LOCAL enable_seqscan = off;

-- name: candidates
-- The documents sharing at least one band value with $1 (the band values of a batch of
-- new documents; the GIN index on `bands` finds them), with their fingerprints, band
-- values and clusters: the caller checks each against the threshold. Run under
-- `gin_only`.
SELECT url_hash, minhash, bands, cluster
FROM near_duplicates
WHERE bands && $1::int[];

-- name: record
-- Record documents just stored ($1..$4 parallel arrays, each one's band values $3 as an
-- int[] literal, since unnest cannot pair rows with arrays; sorted by url_hash so concurrent
-- batches lock rows in one order): a URL stored again (a revisit) gets its new text's
-- fingerprint and cluster.
INSERT INTO near_duplicates AS n (url_hash, minhash, bands, cluster, stored_at)
SELECT i.url_hash, i.minhash, i.bands::int[], i.cluster, now()
FROM unnest($1::char(64)[], $2::bytea[], $3::text[], $4::char(64)[])
     AS i(url_hash, minhash, bands, cluster)
ON CONFLICT (url_hash) DO UPDATE
SET minhash = excluded.minhash, bands = excluded.bands, cluster = excluded.cluster,
    stored_at = excluded.stored_at;

-- name: forget
-- The URLs $1 hold no document any more (removed, or a duplicate of another): they are no
-- one's near-duplicate candidate. Documents naming one of them as their cluster keep it.
DELETE FROM near_duplicates WHERE url_hash = ANY ($1::char(64)[]);
