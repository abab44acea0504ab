-- host_state as the fetcher sees it: robots.txt state, the per-host lease held while one
-- worker fetches a host's robots.txt, and the start of each request, which moves the host's
-- next_allowed_at forward from the moment the request really starts. The pending summary
-- columns (pending_count, pending_priority, pending_due_at) belong to queue.sql. Every
-- statement that locks or changes host_state rows names one bucket (queue.sql's header).

-- name: context
-- What the fetcher needs of hosts $1 right after claiming URLs on them; `now` is the
-- database clock ($2, NULL: now()), which the caller uses to age robots.txt.
WITH clock AS (SELECT coalesce($2::timestamptz, now()) AS now)
SELECT h.host, h.delay_ms, h.next_allowed_at,
       h.backoff_until, h.robots_status, h.robots_txt, h.robots_fetched_at,
       h.robots_ttl_hours, h.robots_retry_at, h.robots_failures, h.lease_owner,
       h.lease_until, c.now
FROM host_state h, clock c
WHERE h.host = ANY ($1::text[]);

-- name: take_leases
-- Lease hosts $1 to $2 for $3 seconds to fetch their robots.txt, the single flight of
-- robots.txt across every fetcher: $5 (parallel to $1) is the robots_fetched_at each host
-- had when the caller decided it needs robots.txt. A host leased to another owner whose
-- lease has not expired is skipped, and so is one whose robots.txt was stored since
-- (robots_fetched_at moved: someone else just fetched it; the caller reads it instead of
-- fetching it again). Returns the hosts leased. $6: their bucket.
WITH clock AS (SELECT coalesce($4::timestamptz, now()) AS now),
input AS (SELECT * FROM unnest($1::text[], $5::timestamptz[]) AS t(host, seen))
UPDATE host_state h
SET lease_owner = $2,
    lease_until = frontier_after(c.now, $3::float8),
    updated_at = c.now
FROM clock c, input i
WHERE h.bucket = $6::int AND h.host = i.host
  AND h.robots_fetched_at IS NOT DISTINCT FROM i.seen
  AND (h.lease_owner IS NULL OR h.lease_owner = $2 OR h.lease_until <= c.now)
RETURNING h.host;

-- name: release_leases
-- Give back the leases of hosts $1 (bucket $3) held by $2.
UPDATE host_state
SET lease_owner = NULL, lease_until = NULL
WHERE bucket = $3::int AND host = ANY ($1::text[]) AND lease_owner = $2;

-- name: store_robots
-- Store robots.txt outcomes ($1..$7 parallel arrays: host, robots_status, robots_txt,
-- http status, error, crawl_delay_ms, Sitemap: lines joined by newlines). $8: TTL hours of
-- a fetched robots.txt; $9: base seconds of the retry delay after a failed fetch (doubling
-- per consecutive failure, capped at a day); $10: now. The robots.txt request counts as a
-- request to the host, so next_allowed_at moves past it by the host's delay. $11: the
-- hosts' bucket.
WITH clock AS (SELECT coalesce($10::timestamptz, now()) AS now),
input AS (
    SELECT *
    FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[],
                $7::text[])
         AS t(host, status, robots_txt, http_status, error, crawl_delay_ms, sitemaps)
)
UPDATE host_state h
SET robots_status = i.status,
    robots_txt = CASE WHEN i.status = 'disallow_all' THEN h.robots_txt ELSE i.robots_txt END,
    robots_http_status = i.http_status,
    robots_error = i.error,
    robots_fetched_at = c.now,
    robots_ttl_hours = $8,
    crawl_delay_ms = CASE WHEN i.status = 'disallow_all' THEN h.crawl_delay_ms
                          ELSE i.crawl_delay_ms END,
    robots_sitemaps = CASE WHEN i.status = 'disallow_all' THEN h.robots_sitemaps
                           ELSE string_to_array(nullif(i.sitemaps, ''), E'\n') END,
    robots_failures = CASE WHEN i.status = 'disallow_all' THEN h.robots_failures + 1 ELSE 0 END,
    robots_retry_at = CASE WHEN i.status = 'disallow_all'
                           THEN frontier_after(c.now, least(86400.0,
                                    $9::float8 * power(2, least(h.robots_failures, 20))))
                      END,
    next_allowed_at = greatest(h.next_allowed_at, frontier_after(
                          c.now, greatest(coalesce(i.crawl_delay_ms, 0), h.delay_ms)
                                  / 1000.0)),
    updated_at = c.now
FROM input i, clock c
WHERE h.bucket = $11::int AND h.host = i.host
RETURNING h.host, h.robots_retry_at, h.delay_ms, c.now;

-- name: begin_requests
-- Worker $3 is about to send one request to each host of $1. A request may go out only
-- inside the slot its claim reserved: before $2 (the claim's next_allowed_at), or while $3
-- holds the host's lease, or on a host without delay; and never while the host backs off.
-- Each host that may go has next_allowed_at moved to now + its delay + a margin (a tenth
-- of the delay, at least 10 ms and at most $4 ms: fetcher/politeness.py `margin_ms`), and
-- the margin is returned (`margin_ms`, NULL where there is no delay to keep): the worker
-- sends only within that margin of asking, so the gap between two requests measured at
-- the server is never below the delay. The lease of $3 is given back. $6: the hosts'
-- bucket.
WITH clock AS (SELECT coalesce($5::timestamptz, now()) AS now),
input AS (
    SELECT * FROM unnest($1::text[], $2::timestamptz[]) AS t(host, slot_end)
),
locked AS (
    SELECT h.host, i.slot_end, h.delay_ms,
           (h.lease_owner = $3 AND h.lease_until > c.now) AS leased,
           coalesce(h.backoff_until, '-infinity') > c.now AS backing_off
    FROM host_state h
    JOIN input i USING (host)
    CROSS JOIN clock c
    WHERE h.bucket = $6::int
    ORDER BY h.host
    FOR UPDATE OF h
),
decided AS (
    SELECT l.host, l.delay_ms,
           least(greatest(l.delay_ms / 10, 10), $4::int) AS margin_ms,
           NOT l.backing_off AND (l.leased OR l.delay_ms = 0 OR c.now < l.slot_end) AS go
    FROM locked l, clock c
),
moved AS (
    UPDATE host_state h
    SET next_allowed_at = CASE WHEN d.go AND d.delay_ms > 0
                               THEN greatest(h.next_allowed_at, frontier_after(c.now,
                                    (d.delay_ms + d.margin_ms) / 1000.0))
                               ELSE h.next_allowed_at END,
        lease_owner = CASE WHEN h.lease_owner = $3 THEN NULL ELSE h.lease_owner END,
        lease_until = CASE WHEN h.lease_owner = $3 THEN NULL ELSE h.lease_until END
    FROM decided d, clock c
    WHERE h.bucket = $6::int AND h.host = d.host
)
SELECT host, go, CASE WHEN go AND delay_ms > 0 THEN margin_ms END AS margin_ms
FROM decided;

-- name: due_now
-- Is any URL due now on a host that is not backing off? (`frontier fetch --until-idle`
-- keeps going while this is true; URLs scheduled for a later retry do not count.)
WITH clock AS (SELECT coalesce($1::timestamptz, now()) AS now)
SELECT EXISTS (
    SELECT 1 FROM host_state h, clock c
    WHERE h.ready_at IS NOT NULL AND h.pending_due_at <= c.now
      AND coalesce(h.backoff_until, '-infinity') <= c.now
);

-- name: sitemaps
-- The Sitemap: lines of hosts $1's robots.txt (for the sitemap poller).
SELECT host, robots_sitemaps FROM host_state
WHERE host = ANY ($1::text[]) AND robots_sitemaps IS NOT NULL;

-- name: take_slot
-- A requester without a claim (the spider) is about to send one request to host $1: take
-- the host's slot if it is due, in one statement. The host_state row is created if
-- missing (min_delay_ms $2, the delay a submit would give it). next_allowed_at moves to
-- now + the host's delay + a margin (as in begin_requests, at most $3 ms; none without a
-- delay) only if it has passed, the host is not backing off and nobody holds its
-- lease (a fetcher fetching its robots.txt). Returns `taken` and the margin kept
-- (`margin_ms`, NULL where there is no delay: the requester sends only within it of
-- asking); otherwise, from the row as it stood, how long until the host may be free
-- (`wait_s`) and why (`reason`: delay, backoff or lease); the caller waits and asks again.
-- $4: now (NULL: the database clock). $5: the host's bucket.
WITH clock AS (SELECT coalesce($4::timestamptz, now()) AS now),
taken AS (
    INSERT INTO host_state AS h (host, bucket, min_delay_ms, next_allowed_at, created_at,
                                 updated_at)
    SELECT $1::text, $5::int, $2::int,
           frontier_after(c.now, ($2::int + CASE WHEN $2::int > 0 THEN
               least(greatest($2::int / 10, 10), $3::int) ELSE 0 END) / 1000.0),
           c.now, c.now
    FROM clock c
    ON CONFLICT (host, bucket) DO UPDATE
    SET next_allowed_at = frontier_after(excluded.updated_at,
            (h.delay_ms + CASE WHEN h.delay_ms > 0 THEN
                least(greatest(h.delay_ms / 10, 10), $3::int) ELSE 0 END) / 1000.0),
        updated_at = excluded.updated_at
    WHERE h.next_allowed_at <= excluded.updated_at
      AND coalesce(h.backoff_until, '-infinity') <= excluded.updated_at
      AND coalesce(h.lease_until, '-infinity') <= excluded.updated_at
    RETURNING CASE WHEN h.delay_ms > 0 THEN least(greatest(h.delay_ms / 10, 10), $3::int)
              END AS margin_ms
)
SELECT EXISTS (SELECT 1 FROM taken) AS taken, (SELECT margin_ms FROM taken) AS margin_ms,
       CASE WHEN h.backoff_until > c.now THEN 'backoff'
            WHEN h.lease_until > c.now THEN 'lease'
            ELSE 'delay' END AS reason,
       extract(epoch FROM greatest(h.next_allowed_at, h.backoff_until, h.lease_until, c.now)
                          - c.now)::float8 AS wait_s
FROM clock c
LEFT JOIN host_state h ON h.bucket = $5::int AND h.host = $1::text;
