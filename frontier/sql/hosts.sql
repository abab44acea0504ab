-- host_state as its requesters see it: robots.txt state and the host's hold. Whoever
-- sends a host a request holds it (its lease: lease_owner, lease_until) until the answer
-- is in, and then releases it, moving next_allowed_at to the answer's time + the host's
-- delay (`release_slots`): one request in flight per host, and the next never sooner than
-- the delay after the previous answer, by the database's clock. A fetcher's claim takes
-- the hold (queue.sql `claim`); a requester without a claim takes it with `take_slot`. A
-- host without a delay is held only while its robots.txt is fetched (`take_leases`). The
-- pending summary columns (pending_count, pending_priority, pending_due_at, in_flight)
-- belong to queue.sql. Every statement that locks or changes host_state rows names one
-- bucket (queue.sql's header).

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
-- fetching it again). A lease $2 holds already (its claim's) is kept as it is: a worker
-- that dies holds a host no longer than its claim's lease. Returns the hosts leased. $6:
-- their bucket.
WITH clock AS (SELECT coalesce($4::timestamptz, now()) AS now),
input AS (SELECT * FROM unnest($1::text[], $5::timestamptz[]) AS t(host, seen))
UPDATE host_state h
SET lease_owner = $2,
    lease_until = CASE WHEN h.lease_owner = $2 AND h.lease_until > c.now THEN h.lease_until
                       ELSE frontier_after(c.now, $3::float8) END,
    updated_at = c.now
FROM clock c, input i
WHERE h.bucket = $6::int AND h.host = i.host
  AND h.robots_fetched_at IS NOT DISTINCT FROM i.seen
  AND (h.lease_owner IS NULL OR h.lease_owner = $2 OR h.lease_until <= c.now)
RETURNING h.host;

-- name: release_slots
-- The answers from hosts $1 (bucket $3) are in: each host's holder, $2 (parallel to $1),
-- gives it back, and the host's next request may start its delay after now ($4, NULL: the
-- database's clock), whoever sends it. The delay is the host's as it stands now (a
-- Crawl-delay just read counts). A host held by anyone else is left alone. A host whose
-- politeness key was busy (another host of the key had a request in flight, or its delay
-- ran: politeness_keys.sql) sent nothing: it is given back snoozed for $5 seconds instead
-- (parallel to $1; NULL: an answer's release), and $6 names the key (host_state.busy_key);
-- $5 and $6 may be empty when no host is snoozed (unnest pads them with NULLs). Fetchers
-- LISTEN on frontier_submitted: a host with pending work is claimable again from
-- next_allowed_at on, and they are told when this commits.
WITH clock AS (SELECT coalesce($4::timestamptz, now()) AS now),
input AS (SELECT * FROM unnest($1::text[], $2::text[], $5::float8[], $6::text[])
                   AS t(host, holder, snooze_s, busy_key)),
released AS (
    UPDATE host_state h
    SET next_allowed_at = greatest(h.next_allowed_at,
                                   frontier_after(c.now, coalesce(i.snooze_s,
                                                                  h.delay_ms / 1000.0))),
        busy_key = i.busy_key,
        lease_owner = NULL,
        lease_until = NULL,
        updated_at = c.now
    FROM input i, clock c
    WHERE h.bucket = $3::int AND h.host = i.host AND h.lease_owner = i.holder
    RETURNING h.pending_due_at IS NOT NULL AS pending
)
SELECT count(*) AS released,
       CASE WHEN bool_or(pending) THEN pg_notify('frontier_submitted', '') END AS notified
FROM released;

-- name: store_robots
-- Store robots.txt outcomes ($1..$7 parallel arrays: host, robots_status, robots_txt,
-- http status, error, crawl_delay_ms, Sitemap: lines joined by newlines). $8: TTL hours of
-- a fetched robots.txt; $9: base seconds of the retry delay after a failed fetch (doubling
-- per consecutive failure, capped at a day); $10: now. The fetcher holds each host while
-- it does this; its next request to the host waits the delay after the robots.txt answer,
-- and `release_slots` counts the delay from the last answer. $11: the hosts' bucket.
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
    updated_at = c.now
FROM input i, clock c
WHERE h.bucket = $11::int AND h.host = i.host
RETURNING h.host, h.robots_retry_at, h.delay_ms, c.now;

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
-- A requester without a claim (the spider, the poller, a manual fire) $3 is about to send
-- one request to host $1: take the host's hold, in one statement, if nobody holds it, its
-- delay has passed and it is not backing off. The row is created if missing (min_delay_ms
-- $2, the delay a submit would give it). The hold is a lease of $6 seconds (a requester
-- that dies holds the host no longer), given back by `release_slots` when the answer is
-- in. A host without a delay is not held (requests to it may overlap), except a new one:
-- its delay is not known until its robots.txt is. Returns `taken`, whether the host is
-- now `held` by $3 and its `delay_ms`; otherwise, from the row as it stood, how long until
-- the host may be free (`wait_s`: for a hold, until its lease would expire) and why
-- (`reason`: delay, backoff or held). $4: now (NULL: the database clock). $5: the host's bucket.
-- A known host without a delay that is free is taken by reading its row alone (`free`):
-- it is not held, and a statement that writes nothing commits without a WAL flush (the
-- upsert rewrote the row's updated_at at every request: a row version, and a flush, a poll).
WITH clock AS (SELECT coalesce($4::timestamptz, now()) AS now),
free AS (
    SELECT h.delay_ms
    FROM host_state h, clock c
    WHERE h.bucket = $5::int AND h.host = $1::text AND h.delay_ms = 0
      AND h.next_allowed_at <= c.now
      AND coalesce(h.backoff_until, '-infinity') <= c.now
      AND coalesce(h.lease_until, '-infinity') <= c.now
),
taken AS (
    INSERT INTO host_state AS h (host, bucket, min_delay_ms, lease_owner, lease_until,
                                 created_at, updated_at)
    SELECT $1::text, $5::int, $2::int, $3::text, frontier_after(c.now, $6::float8),
           c.now, c.now
    FROM clock c
    WHERE NOT EXISTS (SELECT 1 FROM free)
    ON CONFLICT (host, bucket) DO UPDATE
    SET lease_owner = CASE WHEN h.delay_ms > 0 THEN excluded.lease_owner
                           ELSE h.lease_owner END,
        lease_until = CASE WHEN h.delay_ms > 0 THEN excluded.lease_until
                           ELSE h.lease_until END,
        updated_at = excluded.updated_at
    WHERE h.next_allowed_at <= excluded.updated_at
      AND coalesce(h.backoff_until, '-infinity') <= excluded.updated_at
      AND coalesce(h.lease_until, '-infinity') <= excluded.updated_at
    RETURNING h.lease_owner IS NOT DISTINCT FROM $3::text AS held, h.delay_ms
)
SELECT EXISTS (SELECT 1 FROM free) OR EXISTS (SELECT 1 FROM taken) AS taken,
       coalesce((SELECT held FROM taken), false) AS held,
       coalesce((SELECT delay_ms FROM taken), (SELECT delay_ms FROM free)) AS delay_ms,
       CASE WHEN h.backoff_until > c.now THEN 'backoff'
            WHEN h.lease_until > c.now THEN 'held'
            ELSE 'delay' END AS reason,
       extract(epoch FROM greatest(h.next_allowed_at, h.backoff_until, h.lease_until, c.now)
                          - c.now)::float8 AS wait_s
FROM clock c
LEFT JOIN host_state h ON h.bucket = $5::int AND h.host = $1::text;
