-- The frontier queue: submit, claim, complete, renew, reap. Every statement that changes
-- which URLs of a host are pending also keeps that host's summary in host_state
-- (pending_count, pending_priority, pending_due_at), which is what the claim reads: the
-- claimable set is `host_state.ready_at <= now`, one index range, however large
-- url_frontier grows. A submit's summaries go through host_deltas first and reach
-- host_state when they are folded (`fold_host_deltas`, migration 0025). Time-dependent
-- statements take `now` as a parameter; NULL means the database's clock, so fetchers on
-- several machines share one clock.
--
-- Every statement that locks or changes rows of url_frontier or host_state names one
-- bucket (a parameter: frontier/buckets.py computes it from the host, and the caller
-- splits a batch by bucket), so that Citus can route it to the one shard holding it; on
-- a single PostgreSQL there is one bucket, 0. For Citus too, a time is moved forward with
-- `frontier_after(t, seconds)` (migration 0018), not `t + interval`: Citus refuses a
-- STABLE operator on columns in an UPDATE, and adding seconds does not depend on the
-- time zone.

-- name: submit
-- Upsert a batch of normalised URLs ($1..$11 parallel arrays, sorted by url_hash so
-- concurrent batches lock rows in one order: the caller sorts them, and the statement
-- inserts them in the order given, with no sort of its own, which was a twentieth of its
-- work). A known URL only has its priority raised, and only while it is pending; its
-- fetch_url stays. The batch's host summaries are appended to host_deltas, a row a part
-- (`fold_host_deltas` moves them into host_state: until then the URLs are stored but not
-- claimable). $13: the default delay, kept as a new
-- host's min_delay_ms; $10 is each URL's source's rate_limit_ms (NULL: none), and a host's
-- source_delay_ms is the largest of those its URLs came with. $11: the spelling to request
-- (NULL: the same as url). $14: the bucket of every host in the batch. $4..$11 may each
-- be empty when every row has the same value, given once as $15..$22 instead (unnest pads
-- an empty array with NULLs): a bulk import's source, origin, depth, priority and delay
-- are the same on every line, and are then not sent and parsed 5,000 times a batch.
-- $1..$3 (hash, URL, host: every row its own) come as one text of lines each, split here:
-- one value to send instead of 5,000 elements to check and encode.
-- $23: the number of parts a summary is split into (a host's part: its hash modulo $23),
-- so that folds of different parts, which write different hosts, can run at once.
WITH input AS (
    SELECT url_hash, url, host, coalesce($12::timestamptz, now()) AS now,
           coalesce(source_id, $15::uuid) AS source_id,
           coalesce(origin, $16::text) AS origin,
           coalesce(parent_url, $17::text) AS parent_url,
           coalesce(depth, $18::int) AS depth,
           coalesce(priority, $19::int) AS priority,
           coalesce(discovery_meta, $20::text) AS discovery_meta,
           coalesce(delay_ms, $21::int) AS delay_ms,
           coalesce(fetch_url, $22::text) AS fetch_url
    FROM unnest(string_to_array($1::text, E'\n')::char(64)[], string_to_array($2::text, E'\n'),
                string_to_array($3::text, E'\n'), $4::uuid[], $5::text[], $6::text[],
                $7::int[], $8::int[], $9::text[], $10::int[], $11::text[])
         AS t(url_hash, url, host, source_id, origin, parent_url, depth, priority,
              discovery_meta, delay_ms, fetch_url)
),
upserted AS (
    INSERT INTO url_frontier AS u
        (url_hash, bucket, url, host, source_id, origin, parent_url, depth, priority,
         discovery_meta, fetch_url, next_fetch_at, discovered_at, created_at, updated_at)
    SELECT url_hash, $14::int, url, host, source_id, origin, parent_url, depth, priority,
           discovery_meta::jsonb, fetch_url, now, now, now, now
    FROM input
    ON CONFLICT (url_hash, bucket) DO UPDATE
        SET priority = excluded.priority, updated_at = excluded.updated_at
        WHERE u.status = 'pending' AND u.priority < excluded.priority
    RETURNING u.host, u.priority, u.next_fetch_at, (u.xmax = 0) AS inserted
),
per_host AS (
    SELECT host,
           count(*) FILTER (WHERE inserted) AS added,
           max(priority) AS priority,
           min(next_fetch_at) AS due_at
    FROM upserted
    GROUP BY host
),
delta AS (
    INSERT INTO host_deltas (bucket, part, hosts, added, priority, due_at, source_delay_ms,
                             default_delay_ms)
    SELECT $14::int, d.part, array_agg(d.host), array_agg(coalesce(p.added, 0)),
           array_agg(p.priority), array_agg(p.due_at), array_agg(d.delay_ms), $13::int
    FROM (SELECT host, max(delay_ms) AS delay_ms, (hashtext(host) & 65535) % $23::int AS part
          FROM input GROUP BY host) d
    LEFT JOIN per_host p USING (host)
    GROUP BY d.part
)
SELECT count(*) FILTER (WHERE inserted) AS inserted,
       count(*) FILTER (WHERE NOT inserted) AS raised
FROM upserted;

-- name: fold_host_deltas
-- Move every host summary waiting in bucket $1, parts $2, into host_state, each host once
-- (a host is in one part, so folds of other parts never write it): new hosts
-- are created (min_delay_ms the default their batch named), known ones add the URLs
-- inserted to pending_count and keep the best priority, the earliest due time and the
-- largest source delay. A concurrent fold of the same bucket waits for this one's rows and
-- then skips them (deleted); rows committed after its snapshot wait for the next fold.
-- Returns the hosts given new work (URLs inserted or raised), and then notifies: fetchers
-- LISTEN on frontier_submitted, and the notification is sent when this commits, once the
-- URLs are claimable.
WITH taken AS (
    DELETE FROM host_deltas
    WHERE bucket = $1::int AND part = ANY($2::int[])
    RETURNING hosts, added, priority, due_at, source_delay_ms, default_delay_ms
),
per_host AS (
    SELECT d.host, sum(d.added)::int AS added, max(d.priority) AS priority,
           min(d.due_at) AS due_at, max(d.delay_ms) AS delay_ms,
           max(t.default_delay_ms) AS default_delay_ms
    FROM taken t
    CROSS JOIN LATERAL unnest(t.hosts, t.added, t.priority, t.due_at, t.source_delay_ms)
         AS d(host, added, priority, due_at, delay_ms)
    GROUP BY d.host
),
hosts AS (
    INSERT INTO host_state AS h (host, bucket, min_delay_ms, source_delay_ms, pending_count,
                                 pending_priority, pending_due_at)
    SELECT host, $1::int, default_delay_ms, delay_ms, added, priority, due_at
    FROM per_host
    ORDER BY host
    ON CONFLICT (host, bucket) DO UPDATE
        SET source_delay_ms = greatest(h.source_delay_ms, excluded.source_delay_ms),
            pending_count = h.pending_count + excluded.pending_count,
            pending_priority = greatest(h.pending_priority, excluded.pending_priority),
            pending_due_at = least(h.pending_due_at, excluded.pending_due_at)
        WHERE excluded.pending_priority IS NOT NULL
    RETURNING h.pending_priority
)
SELECT count(*) FILTER (WHERE pending_priority IS NOT NULL) AS hosts,
       CASE WHEN count(*) FILTER (WHERE pending_priority IS NOT NULL) > 0
            THEN pg_notify('frontier_submitted', '') END AS notified
FROM hosts;

-- name: claim
-- A claim from bucket $1 for worker $2: up to $3 URLs, at most one per host, each leased
-- for $6 seconds; $4: now (NULL: the database clock); $5: how many URLs a host without a
-- delay may have in flight. Its two statements (lock the ready hosts, then lease their
-- best URLs) are the function `frontier_claim` of migration 0040, which says why two and
-- why a function: on Citus the coordinator sends the call whole to the worker holding the
-- bucket. On a single server, migration 0049 writes its statements (and those of
-- complete, renew and reap) out as static SQL, prepared once a session.
SELECT * FROM frontier_claim($1, $2, $3, $4, $5, $6);

-- name: complete
-- Apply a batch of outcomes for worker $1, guarded: a row changes only while it is still
-- `fetching` and claimed by $1. Returns the rows applied; the caller reports the rest as
-- refused. $2..$10 are parallel arrays; $11 max retries; $12 now; $13 the number of
-- consecutive failures after which the whole host backs off; $14 the 401/403/451 answers
-- after which a URL is dead (forbidden), and the answers of a login wall, a soft 404 or an
-- empty page after which it ends; $15 the 401/403 answers and challenges in a row, with
-- nothing else, after which the whole host backs off (a bot wall); $16 the good answers in a row
-- that take one doubling of the host's delay off (frontier/host_delay.py); $17 the
-- server's spelling reached by same-identity redirects (NULL: unchanged), the next visit's
-- fetch_url. $18: the bucket of every URL in the batch. A `fetched` or `not_modified`
-- outcome with a delay ($10) is due for a revisit then (frontier/revisits.py): it stays
-- pending, its host's summary learns when, and its revisit_step counts the step.
-- The statement is the function `frontier_complete` of migration 0043 (as the claim's is
-- 0040's `frontier_claim`): on Citus the coordinator sends the call whole to the worker
-- holding the bucket. One statement: the URLs, then their hosts' summaries and holds.
SELECT * FROM frontier_complete($18, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
                                $14, $15, $16, $17);

-- name: complete_enqueue
-- `complete` ($1..$18) and, in the same statement, sink_outbox.sql's `enqueue` ($19..$23,
-- its $1..$5) of the rows of the URLs it completes (frontier.outbox): a document fetched
-- waits for each optional sink exactly when its URL's completion happened, in one round
-- trip and no transaction. A single server's: Citus sends a call of frontier_complete
-- whole to the worker holding the bucket only when the call stands alone, so there the
-- two are statements of one transaction. The outbox's part is `enqueue`'s text
-- (tests/integration/test_outbox.py holds them together).
WITH done AS (
    SELECT * FROM frontier_complete($18, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
                                    $13, $14, $15, $16, $17)
),
new AS (
    SELECT s, k, h, o, p
    FROM unnest($19::text[], $20::text[], $21::char(64)[], $22::text[], $23::text[])
         AS i(s, k, h, o, p)
    WHERE h IN (SELECT url_hash FROM done)
),
superseded AS (
    DELETE FROM sink_outbox x
    USING new
    WHERE x.sink = new.s AND x.url_hash = new.h AND x.key <> new.k
      AND (x.lease_until IS NULL OR x.lease_until < now())
),
queued AS (
    INSERT INTO sink_outbox (sink, key, url_hash, op, payload)
    SELECT s, k, h, o, p
    FROM new
    ORDER BY s, k
    ON CONFLICT (sink, key) DO NOTHING
)
SELECT url_hash, status FROM done;

-- name: renew
-- Extend the leases of worker $1's claims $2 (all in bucket $5) by $3 seconds from now
-- ($4). The function `frontier_renew` of migration 0043 (Citus delegates it).
SELECT * FROM frontier_renew($5, $1, $2, $3, $4);

-- name: reap
-- Return up to $1 URLs whose lease expired before $3 to pending; the lost attempt counts
-- as a failure, so a URL that keeps killing its worker ends dead (max_retries, $2); then
-- free host leases that expired (the hold of a requester that died, or of a fetcher that
-- fetched robots.txt and stopped: an expired lease no longer keeps the host from being
-- claimed, ready_at; this only tidies the columns). Bucket $4. The function
-- `frontier_reap` of migration 0043 (Citus delegates it): `returned`, `dead`,
-- `host_leases`.
SELECT * FROM frontier_reap($4, $1, $2, $3);

-- name: in_flight
-- How many URLs are claimed (by $1, or by anyone when $1 is NULL).
SELECT count(*) FROM url_frontier
WHERE status = 'fetching' AND ($1::text IS NULL OR claimed_by = $1);

-- name: next_due
-- The earliest time any host becomes claimable (NULL: nothing pending).
SELECT min(ready_at) FROM host_state WHERE ready_at IS NOT NULL;

-- name: relink_duplicates
-- URLs whose document was removed because another URL holds the same article (the
-- preferred one: docs/duplicates.md): $1 url_hashes, $2 the URL holding it for each. Only
-- `fetched` rows change (a pending revisit finds the holder when it is fetched; a URL
-- being fetched is completed by its own fetch). They stay known, as duplicates linked to
-- the holder: `dead` (`duplicate_content`), `final_url` the holder. $3: their bucket.
UPDATE url_frontier u
SET status = 'dead', dead_reason = 'duplicate_content', final_url = i.holder,
    last_error = 'same content as ' || i.holder, updated_at = now()
FROM unnest($1::char(64)[], $2::text[]) AS i(url_hash, holder)
WHERE u.bucket = $3::int AND u.url_hash = i.url_hash AND u.status = 'fetched'
RETURNING u.url_hash;

-- name: requeue
-- Give failed and dead URLs another chance (an operator's `frontier urls requeue`, or an
-- explicit `submit --requeue`), or fetch fetched ones again (`requeue --status fetched`):
-- of the url_hashes $1 (all in bucket $4), those still `failed`, `dead` or `fetched` and
-- with a status in $2 become pending and due now ($3), with their retry count, dead
-- reason, last error and revisit schedule reset, and a fetched one's validators (ETag,
-- Last-Modified) dropped so that the server sends the page again rather than 304; their
-- hosts' pending summaries learn they have work due. Rows locked by someone else are
-- skipped (SKIP LOCKED): they are changing anyway. Returns how many were requeued.
WITH clock AS (SELECT coalesce($3::timestamptz, now()) AS now),
picked AS (
    SELECT url_hash, status = 'fetched' AS refetch
    FROM url_frontier
    WHERE bucket = $4::int AND url_hash = ANY ($1::char(64)[])
      AND status IN ('failed', 'dead', 'fetched') AND status = ANY ($2::text[])
    ORDER BY url_hash
    FOR UPDATE SKIP LOCKED
),
requeued AS (
    UPDATE url_frontier u
    SET status = 'pending',
        dead_reason = NULL,
        retry_count = 0,
        last_error = NULL,
        next_fetch_at = c.now,
        revisit_step = 0,
        etag = CASE WHEN p.refetch THEN NULL ELSE u.etag END,
        last_modified = CASE WHEN p.refetch THEN NULL ELSE u.last_modified END,
        updated_at = c.now
    FROM picked p, clock c
    WHERE u.bucket = $4::int AND u.url_hash = p.url_hash
    RETURNING u.host, u.priority, u.next_fetch_at
),
per_host AS (
    SELECT host, count(*) AS requeued, max(priority) AS priority, min(next_fetch_at) AS due_at
    FROM requeued
    GROUP BY host
),
hosts AS (
    UPDATE host_state h
    SET pending_count = h.pending_count + p.requeued,
        pending_priority = greatest(h.pending_priority, p.priority),
        pending_due_at = least(h.pending_due_at, p.due_at)
    FROM per_host p
    WHERE h.bucket = $4::int AND h.host = p.host
)
SELECT count(*) AS requeued,
       CASE WHEN count(*) > 0 THEN pg_notify('frontier_submitted', '') END AS notified
FROM requeued;

-- name: take
-- Lease the URLs $2 (all in bucket $4) to $1 for $3 seconds, whatever their due time or
-- their host's turn, when they are pending and were never fetched: `frontier import-warc`
-- completes them with the responses a WARC file holds, so no request is made and the
-- host's pace does not apply (no host hold is taken). A URL fetched before, dead, or
-- claimed by someone else is left alone. Their hosts' summaries count them in flight
-- (`complete` counts them out); a lease that expires is reaped as a fetch's would be.
-- Returns the claims, as `claim` does. $5: now.
WITH clock AS (SELECT coalesce($5::timestamptz, now()) AS now),
picked AS (
    SELECT url_hash
    FROM url_frontier
    WHERE bucket = $4::int AND url_hash = ANY ($2::char(64)[]) AND status = 'pending'
      AND last_fetched_at IS NULL
    ORDER BY url_hash
    FOR UPDATE SKIP LOCKED
),
claimed AS (
    UPDATE url_frontier u
    SET status = 'fetching',
        claimed_by = $1,
        lease_until = frontier_after(c.now, $3::float8),
        fetch_count = u.fetch_count + 1,
        updated_at = c.now
    FROM picked p, clock c
    WHERE u.bucket = $4::int AND u.url_hash = p.url_hash
    RETURNING u.url_hash, u.url, u.host, u.source_id, u.origin, u.parent_url, u.depth,
              u.priority, u.etag, u.last_modified, u.discovery_meta,
              u.retry_count, u.fetch_count, u.lease_until,
              coalesce(u.fetch_url, u.url) AS fetch_url, u.content_hash, u.revisit_step
),
per_host AS (
    SELECT host, count(*) AS taken FROM claimed GROUP BY host
),
hosts AS (
    UPDATE host_state h
    SET in_flight = h.in_flight + p.taken,
        pending_count = greatest(h.pending_count - p.taken, 0),
        updated_at = c.now
    FROM per_host p, clock c
    WHERE h.bucket = $4::int AND h.host = p.host
)
SELECT * FROM claimed;

-- name: stored_claims
-- The `fetched` URLs $1 of bucket $2 as claims, no lease taken: `frontier reextract` makes
-- no request; it runs their archived responses through the steps after a response
-- (fetcher.reextract). A URL being fetched now is left to its fetch.
SELECT url_hash, url, host, source_id, origin, parent_url, depth, priority, etag,
       last_modified, discovery_meta, retry_count, fetch_count, now() AS lease_until,
       coalesce(fetch_url, url) AS fetch_url, content_hash, revisit_step
FROM url_frontier
WHERE bucket = $2::int AND url_hash = ANY ($1::char(64)[]) AND status = 'fetched';

-- name: reextracted
-- The content hash $2 of each `fetched` URL $1 (all in bucket $3) whose document a
-- re-extraction rewrote: the next revisit compares its text with this one.
UPDATE url_frontier u
SET content_hash = i.content_hash, updated_at = now()
FROM unnest($1::char(64)[], $2::text[]) AS i(url_hash, content_hash)
WHERE u.bucket = $3::int AND u.url_hash = i.url_hash AND u.status = 'fetched';
