"""The claim as a function, `frontier_claim`, that Citus runs on the worker holding the
bucket; and counting triggers that do nothing when a statement changed no count.

The claim (QueueRepository.claim, one call per bucket) was two statements in one
transaction, sent by the client: lock the ready hosts, then lease each one's best URL. On
a Citus cluster each was planned on every execution twice over: on the coordinator, where
Citus keeps no generic plan of a statement with parameters and a statement with CTEs is
never "fast path", the whole statement was planned by PostgreSQL, then routed to the one
shard and deparsed to text; then the worker parsed and planned that text again, under a
distributed transaction of two round trips. One call of a function distributed by its
bucket and co-located with host_state is instead sent by the coordinator to that worker as
it is (Citus's function call delegation, planned in a few steps), and there the function
runs both statements on the bucket's shards directly, as a single server runs them on
its tables. The statements are the ones queue.sql held (`claim_hosts`, `claim`), kept
here once for both: a single server's function names the tables. When the call is not
delegated (e.g. a worker without Citus's metadata), the shards are not local and the
function names the distributed tables, which Citus then routes as before.

Each statement is EXECUTEd with its values, so it is planned for them as the client's
prepared statements were (PostgreSQL kept custom plans of both); the two run in one
transaction (the call's), each with its own snapshot (a volatile function's statements
take one each), which the lock-then-lease order needs (see `CLAIM`).

`url_frontier_count_updated` (migration 0018) ran its INSERT into frontier_counts for every
UPDATE of url_frontier, on Citus as dynamic SQL into the co-located shard, even when no row
changed or none changed its count (a renew moves a lease, a submit's upsert a priority).
The deltas are now summed from the transition tables first, and nothing else is run when
there are none. The inserted and deleted triggers likewise return at once when the
statement touched no row. `frontier_colocated_shard` read the shard id out of the
trigger's table name with a regular expression inside its query, which the planner
evaluated against every row of pg_dist_shard (most of the trigger's time on a worker); the
id is now taken apart with string functions first and looked up by the shard index.

Revision ID: 0040
Revises: 0039
Create Date: 2026-11-27
"""

from alembic import op
from sqlalchemy import text

revision = "0040"
down_revision = "0039"
branch_labels = None
depends_on = None

# The claim: queue.sql's `claim_hosts` and `claim` until this revision, as one function.
# {tables} is what the function runs first to name the two tables (TABLES_ON_CITUS).
CLAIM = r"""
-- Claim up to `max_hosts` URLs of bucket `claim_bucket` for `worker`, at most one per host,
-- each leased for `lease_s` seconds; `at`: now (NULL: the database clock). Two statements,
-- in this order:
--
-- First lock up to `max_hosts` ready hosts of the bucket (SKIP LOCKED), best priority
-- first. A host with a delay is ready when its delay has passed and nobody holds it; one
-- without while it has fewer than `host_concurrency` URLs in flight.
--
-- Then take each locked host's best due URL and lease it. A host with a delay is held by
-- the claim for as long (its lease: not claimable, nor requested by anyone else, until the
-- claim's answer gives it back, hosts.sql `release_slots`); the hold's owner is the claim,
-- `worker/url_hash` (frontier.queue_values.claim_hold), so that a worker's other claims
-- never end it. Then recompute each locked host's pending summary.
--
-- Two statements so that the second one's snapshot is taken after the first one's locks:
-- it recomputes each host's pending summary from its URLs, and a complete that requeued
-- one of them (and changed the host's row) committed either before that snapshot (seen)
-- or waits for this transaction's locks (and then folds its URL into the summary written
-- here). In one statement, a complete committing between the statement's snapshot and its
-- lock had its requeued URL summarised away: a pending URL on a host that never came ready
-- again. (A volatile function's statements take a snapshot each.)
CREATE OR REPLACE FUNCTION frontier_claim(
    claim_bucket integer, worker text, max_hosts integer, at timestamptz,
    host_concurrency integer, lease_s float8
) RETURNS TABLE (
    url_hash char(64), url text, host text, source_id uuid, origin text, parent_url text,
    depth integer, priority smallint, etag text, last_modified text, discovery_meta jsonb,
    retry_count integer, fetch_count integer, lease_until timestamptz, fetch_url text,
    content_hash char(64), revisit_step smallint
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    host_table text := 'host_state';
    url_table text := 'url_frontier';
    hosts text[];
    delays integer[];
BEGIN
    {tables}
    EXECUTE format($q$
        SELECT array_agg(host), array_agg(delay_ms) FROM (
            SELECT host, delay_ms
            FROM %I
            WHERE bucket = $3::int AND ready_at <= coalesce($2::timestamptz, now())
              AND (delay_ms > 0 OR in_flight < $4::int)
            ORDER BY pending_priority DESC, ready_at
            LIMIT $1
            FOR UPDATE SKIP LOCKED
        ) AS locked
    $q$, host_table)
    INTO hosts, delays USING max_hosts, at, claim_bucket, host_concurrency;
    IF hosts IS NULL THEN
        RETURN;
    END IF;
    -- Worker $1, hosts $2 (their delays $6, parallel), now $3, lease $4 seconds, bucket $5.
    RETURN QUERY EXECUTE format($q$
        WITH clock AS (SELECT coalesce($3::timestamptz, now()) AS now),
        ready AS (
            SELECT * FROM unnest($2::text[], $6::int[]) AS r(host, delay_ms)
        ),
        picked AS (
            SELECT r.host, p.url_hash
            FROM ready r
            CROSS JOIN LATERAL (
                SELECT u.url_hash
                FROM %2$I u
                WHERE u.bucket = $5::int AND u.host = r.host AND u.status = 'pending'
                  AND u.next_fetch_at <= (SELECT now FROM clock)
                ORDER BY u.priority DESC, u.next_fetch_at
                LIMIT 1
                FOR UPDATE SKIP LOCKED
            ) p
        ),
        claimed AS (
            UPDATE %2$I u
            SET status = 'fetching',
                claimed_by = $1,
                lease_until = frontier_after(c.now, $4::float8),
                fetch_count = u.fetch_count + 1,
                updated_at = c.now
            FROM picked p, clock c
            WHERE u.bucket = $5::int AND u.url_hash = p.url_hash
            RETURNING u.url_hash, u.url, u.host, u.source_id, u.origin, u.parent_url, u.depth,
                      u.priority, u.etag, u.last_modified, u.discovery_meta,
                      u.retry_count, u.fetch_count, u.lease_until,
                      coalesce(u.fetch_url, u.url) AS fetch_url, u.content_hash, u.revisit_step
        ),
        summary AS (
            SELECT r.host, r.delay_ms, p.url_hash IS NOT NULL AS got, p.url_hash,
                   coalesce(due.priority, later.priority) AS priority,
                   coalesce(due.next_fetch_at, later.next_fetch_at) AS due_at
            FROM ready r
            LEFT JOIN picked p USING (host)
            LEFT JOIN LATERAL (
                SELECT u.priority, u.next_fetch_at
                FROM %2$I u
                WHERE u.bucket = $5::int AND u.host = r.host AND u.status = 'pending'
                  AND u.next_fetch_at <= (SELECT now FROM clock)
                  AND u.url_hash IS DISTINCT FROM p.url_hash
                ORDER BY u.priority DESC, u.next_fetch_at
                LIMIT 1
            ) due ON true
            -- Only when nothing else is due: when does the host's next pending URL fall due?
            LEFT JOIN LATERAL (
                SELECT max(u.priority) AS priority, min(u.next_fetch_at) AS next_fetch_at
                FROM %2$I u
                WHERE due.next_fetch_at IS NULL
                  AND u.bucket = $5::int AND u.host = r.host AND u.status = 'pending'
                  AND u.url_hash IS DISTINCT FROM p.url_hash
            ) later ON true
        ),
        hosts AS (
            UPDATE %1$I h
            SET lease_owner = CASE WHEN s.got AND s.delay_ms > 0 THEN $1 || '/' || s.url_hash
                                   ELSE h.lease_owner END,
                -- A host without a delay goes to the back of its priority's queue (ready_at
                -- now), so that claims go round the hosts.
                next_allowed_at = CASE WHEN s.got AND s.delay_ms = 0
                                       THEN greatest(h.next_allowed_at, c.now)
                                       ELSE h.next_allowed_at END,
                lease_until = CASE WHEN s.got AND s.delay_ms > 0
                                   THEN frontier_after(c.now, $4::float8)
                                   ELSE h.lease_until END,
                in_flight = h.in_flight + s.got::int,
                pending_count = greatest(h.pending_count - s.got::int, 0),
                pending_priority = s.priority,
                pending_due_at = s.due_at,
                updated_at = c.now
            FROM summary s, clock c
            WHERE h.bucket = $5::int AND h.host = s.host
        )
        SELECT * FROM claimed
    $q$, host_table, url_table)
    USING worker, hosts, at, lease_s, claim_bucket, delays;
END $$;
"""

# On Citus: the call runs on the worker holding the bucket's shards (the function is
# distributed by `claim_bucket`), where they are named `<table>_<shard id>`.
TABLES_ON_CITUS = """
    IF to_regclass('host_state_' || get_shard_id_for_distribution_column(
                       'host_state', claim_bucket)) IS NOT NULL THEN
        host_table := 'host_state_'
                      || get_shard_id_for_distribution_column('host_state', claim_bucket);
        url_table := 'url_frontier_'
                     || get_shard_id_for_distribution_column('url_frontier', claim_bucket);
    END IF;"""

CLAIM_SIGNATURE = "frontier_claim(integer, text, integer, timestamptz, integer, float8)"

DISTRIBUTE_CLAIM = f"""
SELECT create_distributed_function('{CLAIM_SIGNATURE}', 'claim_bucket',
                                   colocate_with => 'host_state')
"""

UPGRADE = r"""
CREATE OR REPLACE FUNCTION frontier_colocated_shard(trigger_table text, target regclass)
RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
    shard bigint := right(trigger_table, strpos(reverse(trigger_table), '_') - 1)::bigint;
BEGIN
    RETURN (SELECT target::text || '_' || c.shardid
            FROM pg_dist_shard s
            JOIN pg_dist_shard c ON c.logicalrelid = target
                                AND c.shardminvalue = s.shardminvalue
            WHERE s.shardid = shard);
END $$;

CREATE OR REPLACE FUNCTION url_frontier_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM new_rows) THEN
        RETURN NULL;
    END IF;
    IF TG_TABLE_NAME = 'url_frontier' THEN
        INSERT INTO frontier_counts (bucket, source_id, origin, status, n)
        SELECT bucket, source_id, origin, status, count(*) FROM new_rows GROUP BY 1, 2, 3, 4;
    ELSE
        EXECUTE format('INSERT INTO %I (bucket, source_id, origin, status, n)
                        SELECT bucket, source_id, origin, status, count(*)
                        FROM new_rows GROUP BY 1, 2, 3, 4',
                       frontier_colocated_shard(TG_TABLE_NAME, 'frontier_counts'));
    END IF;
    RETURN NULL;
END $$;

-- The deltas are summed into arrays first (static SQL over the transition tables, which
-- a worker runs locally), and written only when there are some.
CREATE OR REPLACE FUNCTION url_frontier_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    buckets integer[];
    sources uuid[];
    origins text[];
    statuses text[];
    ns bigint[];
BEGIN
    SELECT array_agg(bucket), array_agg(source_id), array_agg(origin), array_agg(status),
           array_agg(n)
    INTO buckets, sources, origins, statuses, ns
    FROM (
        SELECT bucket, source_id, origin, status, sum(n) AS n FROM (
            SELECT bucket, source_id, origin, status, -1 AS n FROM old_rows
            UNION ALL
            SELECT bucket, source_id, origin, status, 1 AS n FROM new_rows
        ) AS moves
        GROUP BY 1, 2, 3, 4
        HAVING sum(n) <> 0
    ) AS deltas;
    IF buckets IS NULL THEN
        RETURN NULL;
    END IF;
    IF TG_TABLE_NAME = 'url_frontier' THEN
        INSERT INTO frontier_counts (bucket, source_id, origin, status, n)
        SELECT * FROM unnest(buckets, sources, origins, statuses, ns);
    ELSE
        EXECUTE format('INSERT INTO %I (bucket, source_id, origin, status, n)
                        SELECT * FROM unnest($1, $2, $3, $4, $5)',
                       frontier_colocated_shard(TG_TABLE_NAME, 'frontier_counts'))
        USING buckets, sources, origins, statuses, ns;
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION url_frontier_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM old_rows) THEN
        RETURN NULL;
    END IF;
    IF TG_TABLE_NAME = 'url_frontier' THEN
        INSERT INTO frontier_counts (bucket, source_id, origin, status, n)
        SELECT bucket, source_id, origin, status, -count(*) FROM old_rows GROUP BY 1, 2, 3, 4;
    ELSE
        EXECUTE format('INSERT INTO %I (bucket, source_id, origin, status, n)
                        SELECT bucket, source_id, origin, status, -count(*)
                        FROM old_rows GROUP BY 1, 2, 3, 4',
                       frontier_colocated_shard(TG_TABLE_NAME, 'frontier_counts'));
    END IF;
    RETURN NULL;
END $$;
"""

# Migration 0018's.
DOWNGRADE = r"""
CREATE OR REPLACE FUNCTION frontier_colocated_shard(trigger_table text, target regclass)
RETURNS text LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT target::text || '_' || c.shardid
            FROM pg_dist_shard s
            JOIN pg_dist_shard c ON c.logicalrelid = target
                                AND c.shardminvalue = s.shardminvalue
            WHERE s.shardid = substring(trigger_table FROM '_(\d+)$')::bigint);
END $$;

CREATE OR REPLACE FUNCTION url_frontier_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'url_frontier' THEN
        INSERT INTO frontier_counts (bucket, source_id, origin, status, n)
        SELECT bucket, source_id, origin, status, count(*) FROM new_rows GROUP BY 1, 2, 3, 4;
    ELSE
        EXECUTE format('INSERT INTO %I (bucket, source_id, origin, status, n)
                        SELECT bucket, source_id, origin, status, count(*)
                        FROM new_rows GROUP BY 1, 2, 3, 4',
                       frontier_colocated_shard(TG_TABLE_NAME, 'frontier_counts'));
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION url_frontier_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'url_frontier' THEN
        INSERT INTO frontier_counts (bucket, source_id, origin, status, n)
        SELECT bucket, source_id, origin, status, sum(n) FROM (
            SELECT bucket, source_id, origin, status, -1 AS n FROM old_rows
            UNION ALL
            SELECT bucket, source_id, origin, status, 1 AS n FROM new_rows
        ) AS moves
        GROUP BY 1, 2, 3, 4
        HAVING sum(n) <> 0;
    ELSE
        EXECUTE format('INSERT INTO %I (bucket, source_id, origin, status, n)
                        SELECT bucket, source_id, origin, status, sum(n) FROM (
                            SELECT bucket, source_id, origin, status, -1 AS n FROM old_rows
                            UNION ALL
                            SELECT bucket, source_id, origin, status, 1 AS n FROM new_rows
                        ) AS moves
                        GROUP BY 1, 2, 3, 4
                        HAVING sum(n) <> 0',
                       frontier_colocated_shard(TG_TABLE_NAME, 'frontier_counts'));
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION url_frontier_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'url_frontier' THEN
        INSERT INTO frontier_counts (bucket, source_id, origin, status, n)
        SELECT bucket, source_id, origin, status, -count(*) FROM old_rows GROUP BY 1, 2, 3, 4;
    ELSE
        EXECUTE format('INSERT INTO %I (bucket, source_id, origin, status, n)
                        SELECT bucket, source_id, origin, status, -count(*)
                        FROM old_rows GROUP BY 1, 2, 3, 4',
                       frontier_colocated_shard(TG_TABLE_NAME, 'frontier_counts'));
    END IF;
    RETURN NULL;
END $$;
"""


def has_citus() -> bool:
    found = op.get_bind().execute(
        text("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
    )
    return bool(found.scalar())


def upgrade() -> None:
    citus = has_citus()
    # One statement at a time: on Citus each CREATE FUNCTION is sent on to the workers as
    # the text it came in, which must then be that one command (migration 0018).
    for statement in split(UPGRADE):
        op.execute(statement)
    op.execute(CLAIM.replace("{tables}", TABLES_ON_CITUS.strip() if citus else ""))
    if citus:
        op.execute(DISTRIBUTE_CLAIM)


def downgrade() -> None:
    op.execute(f"DROP FUNCTION {CLAIM_SIGNATURE}")
    for statement in split(DOWNGRADE):
        op.execute(statement)


def split(script: str) -> list[str]:
    """The CREATE FUNCTION statements of `script` (each ends with `END $$;`)."""
    return [part.strip() + "\nEND $$" for part in script.split("END $$;") if part.strip()]
