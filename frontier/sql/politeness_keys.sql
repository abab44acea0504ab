-- politeness_keys: the holds of keys wider than a host (mode `domain` or `ip`,
-- frontier/politeness_key.py). Whoever holds a host (a fetcher's claim, or `take_slot`)
-- and sends it a request takes the host's key too, with the same holder and lease, and
-- gives it back with the host when the answer is in: one request in flight per key, and
-- the key's next request no sooner than the delay of the host just answered after that
-- answer, by the database's clock. A holder that dies leaves a lease that expires: taking
-- a key treats an expired lease as free, so nothing reaps them. Every statement names one
-- bucket (the key's: frontier/buckets.py), as host_state's do.

-- name: take_key
-- Holder $3 is about to send a request to a host of key $1 (bucket $2): take the key, in
-- one statement, if nobody holds it (or the hold's lease expired) and its delay has
-- passed; the hold is a lease of $4 seconds. A holder that holds it already does not take
-- it again (a spider process holds its hosts under one name). $5: now (NULL: the database clock). Returns
-- `taken`; otherwise, from the row as it stood, whether a holder has a request in
-- flight (`held`, with its holder) and when the key's delay ends (`next_allowed_at`).
WITH clock AS (SELECT coalesce($5::timestamptz, now()) AS now),
taken AS (
    INSERT INTO politeness_keys AS k (bucket, key, lease_owner, lease_until, updated_at)
    SELECT $2::int, $1::text, $3::text, frontier_after(c.now, $4::float8), c.now
    FROM clock c
    ON CONFLICT (key, bucket) DO UPDATE
    SET lease_owner = excluded.lease_owner,
        lease_until = excluded.lease_until,
        updated_at = excluded.updated_at
    WHERE k.next_allowed_at <= excluded.updated_at
      AND (k.lease_owner IS NULL OR k.lease_until <= excluded.updated_at)
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM taken) AS taken,
       coalesce(k.lease_until > c.now, false) AS held,
       k.lease_owner, greatest(k.next_allowed_at, c.now) AS next_allowed_at, c.now
FROM clock c
LEFT JOIN politeness_keys k ON k.bucket = $2::int AND k.key = $1::text;

-- name: release_keys
-- The answers from hosts of keys $1 (bucket $4) are in: each key's holder, $2 (parallel to
-- $1), gives it back, and the key's next request may start $3 milliseconds (the delay of
-- the host just answered) after now ($5, NULL: the database's clock); a later time the key
-- had already is kept (the largest delay wins). A key held by anyone else is left alone.
WITH clock AS (SELECT coalesce($5::timestamptz, now()) AS now),
input AS (SELECT * FROM unnest($1::text[], $2::text[], $3::int[]) AS t(key, holder, delay_ms))
UPDATE politeness_keys k
SET next_allowed_at = greatest(k.next_allowed_at, frontier_after(c.now, i.delay_ms / 1000.0)),
    lease_owner = NULL,
    lease_until = NULL,
    updated_at = c.now
FROM input i, clock c
WHERE k.bucket = $4::int AND k.key = i.key AND k.lease_owner = i.holder
RETURNING k.key;

-- name: key_state
-- Key $1 (bucket $2) as it stands: its holder and when its delay ends (url show).
SELECT key, lease_owner, lease_until, next_allowed_at FROM politeness_keys
WHERE bucket = $2::int AND key = $1::text;
