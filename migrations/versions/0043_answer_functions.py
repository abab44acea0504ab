"""The answer path as functions that Citus runs on the worker holding the bucket:
`frontier_complete`, `frontier_renew` and `frontier_reap`, as migration 0040 made the claim
`frontier_claim`.

On a Citus cluster queue.sql's `complete`, `renew`, `reap` and `reap_host_leases` were
planned in full on the coordinator on every execution (Citus keeps no generic plan of a
routed statement with parameters, and a statement with CTEs is never "fast path"),
deparsed to text, then parsed and planned again on the worker, under a distributed
transaction; `complete` also ran inside a transaction block, where Citus delegates no
call. Each is now one call of a function distributed by its bucket and co-located with
host_state, which the coordinator sends whole to the worker holding the bucket (Citus's
function call delegation); there it runs its statements on the bucket's shards directly,
as a single server runs them on its tables. The statements are the ones queue.sql held,
unchanged, kept here once for both: a single server's functions name the tables. When a
call is not delegated (inside a transaction block, as a complete with redirects is, or on
a worker without Citus's metadata), the shards are not local, the function names the
distributed tables, and Citus routes each statement as before.

Each statement keeps its parameters' numbers ($1, $2, ...) as in the .sql file, so the
text is the one that was reviewed there; the function passes its arguments in that order.

`reap` and `reap_host_leases` are one call (`frontier_reap`) of two statements: the URL
leases first, then the host leases, each with its own snapshot, as when they were two
calls.

The trade-off, as with 0040: these statements now live in a migration, so changing one
takes a new migration (CREATE OR REPLACE of its function), not an edit of queue.sql.

Not hosts.sql's `release_slots`: it notifies the fetchers (pg_notify) in its statement,
and a delegated call runs on a worker, where nobody LISTENs.

Revision ID: 0043
Revises: 0042
Create Date: 2026-11-28
"""

from alembic import op
from sqlalchemy import text

revision = "0043"
down_revision = "0042"
branch_labels = None
depends_on = None

# queue.sql's `complete` until this revision (its comment there says what each value is).
COMPLETE = r"""
CREATE OR REPLACE FUNCTION frontier_complete(
    in_bucket integer, worker text, url_hashes char(64)[], kinds text[],
    http_statuses integer[], content_hashes text[], etags text[], last_modifieds text[],
    final_urls text[], errors text[], delays_s float8[], max_retries integer,
    at timestamptz, host_failure_threshold integer, forbidden_attempts integer,
    wall_threshold integer, recovery_answers integer, fetch_urls text[]
) RETURNS TABLE (url_hash char(64), status text) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    host_table text := 'host_state';
    url_table text := 'url_frontier';
BEGIN
    {tables}
    RETURN QUERY EXECUTE format($q$
        WITH clock AS (SELECT coalesce($12::timestamptz, now()) AS now),
        input AS (
            SELECT *
            -- char(64)[] like the column, so the join uses the primary key, not a scan.
            FROM unnest($2::char(64)[], $3::text[], $4::int[], $5::text[], $6::text[],
                        $7::text[], $8::text[], $9::text[], $10::float8[], $17::text[])
                 AS t(url_hash, kind, http_status, content_hash, etag, last_modified,
                      final_url, error, delay_s, fetch_url)
        ),
        decided AS (
            SELECT i.*,
                   -- (Searched CASEs throughout: Citus deparses `CASE x WHEN ...` wrongly.)
                   CASE
                       WHEN i.kind IN ('fetched', 'not_modified') THEN
                           CASE WHEN i.delay_s IS NULL THEN 'fetched' ELSE 'pending' END
                       WHEN i.kind = 'failed' THEN 'failed'
                       WHEN i.kind IN ('rate_limited', 'deferred') THEN 'pending'
                       WHEN i.kind = 'retry' THEN
                           CASE WHEN u.retry_count + 1 > $11 THEN 'dead' ELSE 'pending' END
                       WHEN i.kind IN ('forbidden', 'login_required', 'soft_404') THEN
                           CASE WHEN u.retry_count + 1 >= $14 THEN 'dead' ELSE 'pending' END
                       -- Not the article, but maybe one a browser shows: never dead (failed
                       -- is for an operator to look at and requeue).
                       WHEN i.kind = 'challenge' THEN
                           CASE WHEN u.retry_count + 1 > $11 THEN 'failed' ELSE 'pending' END
                       WHEN i.kind = 'empty' THEN
                           CASE WHEN u.retry_count + 1 >= $14 THEN 'failed' ELSE 'pending' END
                       ELSE 'dead'
                   END AS status,
                   CASE
                       WHEN i.kind = 'retry' THEN
                           CASE WHEN u.retry_count + 1 > $11 THEN 'max_retries' END
                       WHEN i.kind IN ('forbidden', 'login_required', 'soft_404') THEN
                           CASE WHEN u.retry_count + 1 >= $14 THEN i.kind END
                       WHEN i.kind IN ('redirect', 'not_found', 'gone', 'robots_blocked',
                                       'duplicate_content', 'unsupported_content',
                                       'blocked_by_policy', 'noindex') THEN i.kind
                   END AS dead_reason
            FROM input i
            JOIN %2$I u ON u.bucket = $18::int AND u.url_hash = i.url_hash
        ),
        updated AS (
            UPDATE %2$I u
            SET status = d.status,
                dead_reason = d.dead_reason,
                retry_count = CASE WHEN d.kind IN ('retry', 'forbidden', 'challenge',
                                                   'login_required', 'soft_404', 'empty')
                                   THEN u.retry_count + 1
                                   WHEN d.kind IN ('fetched', 'not_modified') THEN 0
                                   ELSE u.retry_count END,
                -- A deferral made no request: the attempt counted at claim time is taken back.
                fetch_count = u.fetch_count - (d.kind = 'deferred')::int,
                revisit_step = CASE WHEN d.kind IN ('fetched', 'not_modified')
                                         AND d.delay_s IS NOT NULL
                                    THEN u.revisit_step + 1 ELSE u.revisit_step END,
                next_fetch_at = CASE WHEN d.status = 'pending'
                                     THEN frontier_after(c.now, coalesce(d.delay_s, 0))
                                     ELSE u.next_fetch_at END,
                last_fetched_at = CASE WHEN d.kind = 'deferred' THEN u.last_fetched_at
                                       ELSE c.now END,
                content_hash = coalesce(d.content_hash, u.content_hash),
                etag = CASE WHEN d.kind = 'fetched' THEN d.etag
                            WHEN d.kind = 'not_modified' THEN coalesce(d.etag, u.etag)
                            ELSE u.etag END,
                last_modified = CASE WHEN d.kind = 'fetched' THEN d.last_modified
                                     WHEN d.kind = 'not_modified'
                                     THEN coalesce(d.last_modified, u.last_modified)
                                     ELSE u.last_modified END,
                final_url = coalesce(d.final_url, u.final_url),
                fetch_url = CASE WHEN d.fetch_url IS NULL THEN u.fetch_url
                                 ELSE nullif(d.fetch_url, u.url) END,
                http_status = coalesce(d.http_status, u.http_status),
                last_error = d.error,
                claimed_by = NULL,
                lease_until = NULL,
                updated_at = c.now
            FROM decided d, clock c
            WHERE u.bucket = $18::int AND u.url_hash = d.url_hash AND u.status = 'fetching'
              AND u.claimed_by = $1
            RETURNING u.url_hash, u.host, u.status, u.priority, u.next_fetch_at, d.kind,
                      d.delay_s, $1 || '/' || u.url_hash AS hold,
                      (d.kind = 'challenge'
                       OR (d.kind = 'forbidden' AND d.http_status IN (401, 403))) AS walled
        ),
        per_host AS (
            SELECT host,
                   count(*) AS ended,
                   array_agg(hold) AS holds,
                   count(*) FILTER (WHERE status = 'pending') AS requeued,
                   max(priority) FILTER (WHERE status = 'pending') AS priority,
                   min(next_fetch_at) FILTER (WHERE status = 'pending') AS due_at,
                   -- A good answer: the server answered without pushing back (451 counts:
                   -- it is about one page, not a wall in front of the host).
                   count(*) FILTER (WHERE kind NOT IN ('retry', 'rate_limited', 'deferred',
                                                       'failed')
                                      AND NOT walled) AS answered,
                   count(*) FILTER (WHERE kind IN ('retry', 'rate_limited') OR walled)
                       AS failures,
                   count(*) FILTER (WHERE walled) AS walled,
                   bool_or(kind = 'rate_limited') AS rate_limited,
                   max(delay_s) FILTER (WHERE kind = 'rate_limited') AS retry_after_s,
                   -- Here, not in the UPDATE: Citus refuses volatile functions there.
                   0.8 + 0.4 * random() AS jitter
            FROM updated
            GROUP BY host
        ),
        hosts AS (
            UPDATE %1$I h
            SET in_flight = greatest(h.in_flight - p.ended, 0),
                -- A hold one of these claims still has (its answer's release did not
                -- happen: a failure) ends here, as release_slots (hosts.sql) would end it.
                next_allowed_at = CASE WHEN h.lease_owner = ANY (p.holds)
                                       THEN greatest(h.next_allowed_at,
                                                     frontier_after(c.now, h.delay_ms / 1000.0))
                                       ELSE h.next_allowed_at END,
                lease_owner = CASE WHEN h.lease_owner = ANY (p.holds) THEN NULL
                                   ELSE h.lease_owner END,
                lease_until = CASE WHEN h.lease_owner = ANY (p.holds) THEN NULL
                                   ELSE h.lease_until END,
                pending_count = h.pending_count + p.requeued,
                pending_priority = greatest(h.pending_priority, p.priority),
                pending_due_at = least(h.pending_due_at, p.due_at),
                last_fetch_at = CASE WHEN p.answered + p.failures > 0 THEN c.now
                                     ELSE h.last_fetch_at END,
                consecutive_failures = CASE WHEN p.answered > 0 THEN 0
                                            ELSE h.consecutive_failures + p.failures END,
                -- Rate limited (429/503): block the host until exactly Retry-After, or for
                -- a delay that doubles per incident (capped at a day, jittered). Repeated
                -- failures back off the whole host the same way, and so does a bot wall
                -- (answers that are all 401/403, from a longer base: a wall does not lift
                -- in a minute). A good answer resets the count.
                backoff_until = CASE
                    WHEN p.rate_limited
                         OR (p.answered = 0 AND h.consecutive_failures + p.failures >= $13)
                         OR (p.answered = 0 AND p.walled > 0
                             AND h.consecutive_failures + p.failures >= $15)
                    THEN greatest(coalesce(h.backoff_until, c.now), frontier_after(c.now,
                             coalesce(p.retry_after_s,
                                      least(86400.0,
                                            CASE WHEN p.walled > 0 THEN 300.0 ELSE 30.0 END
                                            * power(2, least(h.consecutive_failures, 20)))
                                      * p.jitter)))
                    ELSE h.backoff_until END,
                -- Each 429/503 doubles the host's delay (delay_ms is generated from
                -- slowdown); $16 good answers in a row take one doubling off
                -- (frontier/host_delay.py).
                slowdown = CASE
                    WHEN p.rate_limited THEN least(h.slowdown + 1, 7)
                    WHEN h.slowdown = 0 OR p.answered = 0 THEN h.slowdown
                    ELSE greatest(h.slowdown - (h.good_answers + p.answered) / $16, 0) END,
                good_answers = CASE
                    WHEN p.rate_limited THEN 0
                    WHEN h.slowdown = 0 OR p.answered = 0 THEN h.good_answers
                    WHEN h.slowdown - (h.good_answers + p.answered) / $16 <= 0 THEN 0
                    ELSE (h.good_answers + p.answered) %% $16 END,
                updated_at = c.now
            FROM per_host p, clock c
            WHERE h.bucket = $18::int AND h.host = p.host
        )
        SELECT url_hash, status FROM updated
    $q$, host_table, url_table)
    USING worker, url_hashes, kinds, http_statuses, content_hashes, etags, last_modifieds,
          final_urls, errors, delays_s, max_retries, at, host_failure_threshold,
          forbidden_attempts, wall_threshold, recovery_answers, fetch_urls, in_bucket;
END $$;
"""

COMPLETE_SIGNATURE = (
    "frontier_complete(integer, text, char(64)[], text[], integer[], text[], text[], text[],"
    " text[], text[], float8[], integer, timestamptz, integer, integer, integer, integer,"
    " text[])"
)

# queue.sql's `renew`.
RENEW = r"""
CREATE OR REPLACE FUNCTION frontier_renew(
    in_bucket integer, worker text, url_hashes char(64)[], lease_s float8, at timestamptz
) RETURNS TABLE (url_hash char(64)) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    host_table text := 'host_state';
    url_table text := 'url_frontier';
BEGIN
    {tables}
    RETURN QUERY EXECUTE format($q$
        WITH clock AS (SELECT coalesce($4::timestamptz, now()) AS now)
        UPDATE %I u
        SET lease_until = frontier_after(c.now, $3::float8)
        FROM clock c
        WHERE u.bucket = $5::int AND u.url_hash = ANY ($2::char(64)[])
          AND u.status = 'fetching' AND u.claimed_by = $1
        RETURNING u.url_hash
    $q$, url_table)
    USING worker, url_hashes, lease_s, at, in_bucket;
END $$;
"""

RENEW_SIGNATURE = "frontier_renew(integer, text, char(64)[], float8, timestamptz)"

# queue.sql's `reap`, then its `reap_host_leases`.
REAP = r"""
CREATE OR REPLACE FUNCTION frontier_reap(
    in_bucket integer, max_urls integer, max_retries integer, at timestamptz
) RETURNS TABLE (returned bigint, dead bigint, host_leases bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    host_table text := 'host_state';
    url_table text := 'url_frontier';
    freed bigint;
BEGIN
    {tables}
    EXECUTE format($q$
        WITH clock AS (SELECT coalesce($3::timestamptz, now()) AS now),
        expired AS (
            SELECT url_hash
            FROM %2$I
            WHERE bucket = $4::int AND status = 'fetching'
              AND lease_until < (SELECT now FROM clock)
            ORDER BY lease_until
            LIMIT $1
            FOR UPDATE SKIP LOCKED
        ),
        returned AS (
            UPDATE %2$I u
            SET status = CASE WHEN u.retry_count + 1 > $2 THEN 'dead' ELSE 'pending' END,
                dead_reason = CASE WHEN u.retry_count + 1 > $2 THEN 'max_retries' END,
                retry_count = u.retry_count + 1,
                last_error = 'lease expired: worker ' || u.claimed_by || ' did not complete it',
                claimed_by = NULL,
                lease_until = NULL,
                next_fetch_at = c.now,
                updated_at = c.now
            FROM expired e, clock c
            WHERE u.bucket = $4::int AND u.url_hash = e.url_hash
            RETURNING u.host, u.status, u.priority, u.next_fetch_at
        ),
        per_host AS (
            SELECT host, count(*) AS ended,
                   count(*) FILTER (WHERE status = 'pending') AS requeued,
                   max(priority) FILTER (WHERE status = 'pending') AS priority,
                   min(next_fetch_at) FILTER (WHERE status = 'pending') AS due_at
            FROM returned
            GROUP BY host
        ),
        hosts AS (
            UPDATE %1$I h
            SET in_flight = greatest(h.in_flight - p.ended, 0),
                pending_count = h.pending_count + p.requeued,
                pending_priority = greatest(h.pending_priority, p.priority),
                pending_due_at = least(h.pending_due_at, p.due_at)
            FROM per_host p
            WHERE h.bucket = $4::int AND h.host = p.host
        )
        SELECT count(*) FILTER (WHERE status = 'pending'),
               count(*) FILTER (WHERE status = 'dead')
        FROM returned
    $q$, host_table, url_table)
    INTO returned, dead USING max_urls, max_retries, at, in_bucket;
    -- Free host leases that expired (the hold of a requester that died, or of a fetcher
    -- that fetched robots.txt and stopped). An expired lease no longer keeps the host
    -- from being claimed (ready_at); this only tidies the columns.
    EXECUTE format($q$
        WITH clock AS (SELECT coalesce($1::timestamptz, now()) AS now)
        UPDATE %I h
        SET lease_owner = NULL, lease_until = NULL
        FROM clock c
        WHERE h.bucket = $2::int AND h.lease_until < c.now
    $q$, host_table)
    USING at, in_bucket;
    GET DIAGNOSTICS freed = ROW_COUNT;
    host_leases := freed;
    RETURN NEXT;
END $$;
"""

REAP_SIGNATURE = "frontier_reap(integer, integer, integer, timestamptz)"

FUNCTIONS = {
    COMPLETE_SIGNATURE: COMPLETE,
    RENEW_SIGNATURE: RENEW,
    REAP_SIGNATURE: REAP,
}

# On Citus: the call runs on the worker holding the bucket's shards (each function is
# distributed by `in_bucket`), where they are named `<table>_<shard id>` (migration 0040).
TABLES_ON_CITUS = """
    IF to_regclass('host_state_' || get_shard_id_for_distribution_column(
                       'host_state', in_bucket)) IS NOT NULL THEN
        host_table := 'host_state_'
                      || get_shard_id_for_distribution_column('host_state', in_bucket);
        url_table := 'url_frontier_'
                     || get_shard_id_for_distribution_column('url_frontier', in_bucket);
    END IF;"""


def has_citus() -> bool:
    found = op.get_bind().execute(
        text("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
    )
    return bool(found.scalar())


def upgrade() -> None:
    citus = has_citus()
    for signature, function in FUNCTIONS.items():
        op.execute(function.replace("{tables}", TABLES_ON_CITUS.strip() if citus else ""))
        if citus:
            op.execute(
                f"SELECT create_distributed_function('{signature}', 'in_bucket',"
                " colocate_with => 'host_state')"
            )


def downgrade() -> None:
    for signature in FUNCTIONS:
        op.execute(f"DROP FUNCTION {signature}")
