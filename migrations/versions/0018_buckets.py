"""Buckets: `url_frontier` and `host_state` carry the bucket of their host, and on a
database with the `citus` extension the schema is distributed.

Every host belongs to one of N buckets (frontier/buckets.py computes it; the SQL function
`frontier_bucket(host, n)` is the same function, for re-bucketing in the database). Every
statement that locks or changes rows of the two tables names one bucket, which is what
Citus needs to route it. N lives in `frontier_buckets` (one row) so every process finds it
there; this migration makes it 1 and puts every row in bucket 0, so on a single PostgreSQL
nothing changes but the keys: url_frontier's primary key becomes (url_hash, bucket),
host_state's (host, bucket) (Citus requires the distribution column in every unique key;
the bucket follows from the host, so they are as unique as before), and the claim's index
leads with the bucket. `frontier_counts` gains the bucket too, so its deltas can be written
next to the rows they count.

When the database has the `citus` extension (created by its administrator, with the
worker nodes added: deploy/README.md), the same schema is distributed: url_frontier,
host_state, frontier_counts and event_counts by bucket, co-located (one shard holds a
bucket's rows of all four), the small tables (sources and those keyed by source,
frontier_buckets) as reference tables, and fetch_log and raw_content stay on the
coordinator (their foreign keys to sources are dropped there: Citus refuses a foreign key
from a coordinator table to a reference table that it has not converted itself). The
statement triggers that keep frontier_counts and event_counts write into the co-located
shard (on Citus they run on the worker holding the shard that changed, where a
distributed insert is refused); on a single server they are static SQL as before.
Distributing rewrites the tables: on a big frontier it takes as long as copying it.

Revision ID: 0018
Revises: 0011
Create Date: 2026-11-24
"""

from alembic import op
from sqlalchemy import text

revision = "0018"
down_revision = "0011"
branch_labels = None
depends_on = None

ROLES = ("frontier_fetcher", "frontier_poller", "frontier_spider", "frontier_api")

# The statement triggers' functions: on a single PostgreSQL (and on the Citus coordinator)
# the trigger's table is url_frontier itself and the insert is static SQL; on a Citus
# worker it is a shard (url_frontier_<shardid>), and the delta goes to the shard of
# frontier_counts that holds the same hash range.
COUNT_FUNCTIONS = r"""
-- The shard of `target` co-located with the shard `trigger_table` (`<table>_<shardid>`).
-- (PL/pgSQL, so that a database without Citus, where pg_dist_shard is missing, takes it.)
CREATE OR REPLACE FUNCTION frontier_colocated_shard(trigger_table text, target regclass)
RETURNS text LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT target::text || '_' || c.shardid
            FROM pg_dist_shard s
            JOIN pg_dist_shard c ON c.logicalrelid = target
                                AND c.shardminvalue = s.shardminvalue
            WHERE s.shardid = substring(trigger_table FROM '_(\d+)$')::bigint);
END $$;

-- migration 0004's, in two steps: the counts are read from the transition table into
-- arrays first, because on Citus (where event_counts is distributed) an INSERT that reads
-- a transition table directly is planned on the workers, which cannot see it.
CREATE OR REPLACE FUNCTION event_counts_from_fetch_log() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    kinds text[];
    outcomes text[];
    ns bigint[];
BEGIN
    SELECT array_agg(kind), array_agg(outcome), array_agg(n) INTO kinds, outcomes, ns
    FROM (SELECT kind, outcome, count(*) AS n FROM new_rows GROUP BY 1, 2) AS counted;
    INSERT INTO event_counts (event, kind, outcome, n)
    SELECT 'log', k, o, n FROM unnest(kinds, outcomes, ns) AS t(k, o, n);
    RETURN NULL;
END $$;

-- migration 0004's, writing the bucket, and on Citus into the co-located shard.
CREATE OR REPLACE FUNCTION event_counts_from_frontier() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'frontier_counts' THEN
        INSERT INTO event_counts (bucket, event, n)
        SELECT bucket, CASE status WHEN 'fetching' THEN 'claim' ELSE 'sink_error' END, sum(n)
        FROM new_rows
        WHERE n > 0 AND status IN ('fetching', 'failed') AND at > '-infinity'
        GROUP BY 1, 2;
    ELSE
        EXECUTE format('INSERT INTO %I (bucket, event, n)
                        SELECT bucket, CASE WHEN status = ''fetching'' THEN ''claim''
                                            ELSE ''sink_error'' END, sum(n)
                        FROM new_rows
                        WHERE n > 0 AND status IN (''fetching'', ''failed'')
                          AND at > ''-infinity''
                        GROUP BY 1, 2',
                       frontier_colocated_shard(TG_TABLE_NAME, 'event_counts'));
    END IF;
    RETURN NULL;
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

UPGRADE = r"""
-- How many buckets the hosts are spread over (one row). Raising it is a procedure
-- (deploy/README.md): every row's bucket is recomputed with every writer stopped.
CREATE TABLE frontier_buckets (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    n   integer NOT NULL CHECK (n BETWEEN 1 AND 4096)
);
INSERT INTO frontier_buckets (n) VALUES (1);

-- frontier/buckets.py `bucket_of`, in SQL: the first four bytes of the SHA-256 of the
-- host's name, unsigned, modulo n.
CREATE FUNCTION frontier_bucket(host text, n integer) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT (('x' || substr(encode(sha256(convert_to(host, 'UTF8')), 'hex'), 1, 8))::bit(32)
            ::bigint & 4294967295) % n
$$;

-- `t + make_interval(secs => s)`, declared immutable (adding seconds does not depend on
-- the time zone) so that Citus takes it in an UPDATE of a distributed table, where it
-- refuses `timestamptz + interval` (STABLE) on columns. Inlined: no cost.
CREATE FUNCTION frontier_after(t timestamptz, seconds float8) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT t + make_interval(secs => seconds) $$;

-- Spread the hosts over n buckets: with every writer stopped (deploy/README.md), each
-- host_state and url_frontier row whose bucket changes is copied under its new bucket and
-- the old one deleted (an UPDATE of the distribution column is refused by Citus; the
-- copy is one INSERT ... SELECT, which Citus runs shard to shard).
CREATE FUNCTION frontier_rebucket(n integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    target text;
    columns text;
BEGIN
    IF n IS NULL OR n NOT BETWEEN 1 AND 4096 THEN
        RAISE EXCEPTION 'the number of buckets must be between 1 and 4096, not %', n
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    UPDATE frontier_buckets SET n = frontier_rebucket.n;
    FOREACH target IN ARRAY ARRAY['host_state', 'url_frontier'] LOOP
        SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO columns
        FROM pg_attribute
        WHERE attrelid = target::regclass AND attnum > 0 AND NOT attisdropped
          AND attgenerated = '' AND attname <> 'bucket';
        EXECUTE format('INSERT INTO %I (%s, bucket) SELECT %s, frontier_bucket(host, %s) '
                       'FROM %I WHERE bucket <> frontier_bucket(host, %s)',
                       target, columns, columns, n, target, n);
        EXECUTE format('DELETE FROM %I WHERE bucket <> frontier_bucket(host, %s)', target, n);
    END LOOP;
END $$;

ALTER TABLE url_frontier ADD COLUMN bucket integer NOT NULL DEFAULT 0 CHECK (bucket >= 0);
ALTER TABLE url_frontier DROP CONSTRAINT url_frontier_pkey,
    ADD PRIMARY KEY (url_hash, bucket);
ALTER TABLE host_state ADD COLUMN bucket integer NOT NULL DEFAULT 0 CHECK (bucket >= 0);
ALTER TABLE host_state DROP CONSTRAINT host_state_pkey, ADD PRIMARY KEY (host, bucket);
DROP INDEX host_state_ready_idx;
CREATE INDEX host_state_ready_idx ON host_state (bucket, pending_priority DESC, ready_at)
    WHERE ready_at IS NOT NULL;
ALTER TABLE frontier_counts ADD COLUMN bucket integer NOT NULL DEFAULT 0;
ALTER TABLE event_counts ADD COLUMN bucket integer NOT NULL DEFAULT 0;
"""

GRANTS = """
GRANT SELECT ON frontier_buckets TO {role};
GRANT INSERT (bucket) ON url_frontier TO {role};
GRANT INSERT (bucket) ON host_state TO {role};
"""

# Run only on a database with the citus extension.
DISTRIBUTE = r"""
SET LOCAL citus.enable_unsafe_triggers = on;
SET LOCAL citus.multi_shard_modify_mode = 'sequential';
-- Made again once both tables are distributed, so Citus copies it to the shards.
DROP TRIGGER event_counts_from_frontier ON frontier_counts;
ALTER TABLE fetch_log DROP CONSTRAINT IF EXISTS fetch_log_source_id_fkey;
ALTER TABLE raw_content DROP CONSTRAINT IF EXISTS raw_content_source_id_fkey;
SELECT create_reference_table('sources');
SELECT create_reference_table('feed_state');
SELECT create_reference_table('seeded_sources');
SELECT create_reference_table('spider_state');
SELECT create_reference_table('spider_pages');
SELECT create_reference_table('frontier_buckets');
SELECT create_distributed_table('host_state', 'bucket');
SELECT create_distributed_table('url_frontier', 'bucket', colocate_with => 'host_state');
SELECT create_distributed_table('frontier_counts', 'bucket', colocate_with => 'host_state');
SELECT create_distributed_table('event_counts', 'bucket', colocate_with => 'host_state');
CREATE TRIGGER event_counts_from_frontier AFTER INSERT ON frontier_counts
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION event_counts_from_frontier();
"""

DOWNGRADE = r"""
ALTER TABLE event_counts DROP COLUMN bucket;
ALTER TABLE frontier_counts DROP COLUMN bucket;
DROP INDEX host_state_ready_idx;
CREATE INDEX host_state_ready_idx ON host_state (pending_priority DESC, ready_at)
    WHERE ready_at IS NOT NULL;
ALTER TABLE host_state DROP CONSTRAINT host_state_pkey, ADD PRIMARY KEY (host);
ALTER TABLE host_state DROP COLUMN bucket;
ALTER TABLE url_frontier DROP CONSTRAINT url_frontier_pkey, ADD PRIMARY KEY (url_hash);
ALTER TABLE url_frontier DROP COLUMN bucket;
DROP FUNCTION frontier_rebucket(integer);
DROP FUNCTION frontier_bucket(text, integer);
DROP FUNCTION frontier_after(timestamptz, float8);
DROP TABLE frontier_buckets;

CREATE OR REPLACE FUNCTION url_frontier_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO frontier_counts (source_id, origin, status, n)
    SELECT source_id, origin, status, count(*) FROM new_rows GROUP BY 1, 2, 3;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION url_frontier_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO frontier_counts (source_id, origin, status, n)
    SELECT source_id, origin, status, sum(n) FROM (
        SELECT source_id, origin, status, -1 AS n FROM old_rows
        UNION ALL
        SELECT source_id, origin, status, 1 AS n FROM new_rows
    ) AS moves
    GROUP BY 1, 2, 3
    HAVING sum(n) <> 0;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION url_frontier_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO frontier_counts (source_id, origin, status, n)
    SELECT source_id, origin, status, -count(*) FROM old_rows GROUP BY 1, 2, 3;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION event_counts_from_frontier() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_counts (event, n)
    SELECT CASE status WHEN 'fetching' THEN 'claim' ELSE 'sink_error' END, sum(n)
    FROM new_rows
    WHERE n > 0 AND status IN ('fetching', 'failed') AND at > '-infinity'
    GROUP BY 1;
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION event_counts_from_fetch_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_counts (event, kind, outcome, n)
    SELECT 'log', kind, outcome, count(*) FROM new_rows GROUP BY 2, 3;
    RETURN NULL;
END $$;
DROP FUNCTION frontier_colocated_shard(text, regclass);
"""


def has_citus() -> bool:
    """Whether the target database has the citus extension (`frontier db upgrade` then
    builds the distributed schema)."""
    found = op.get_bind().execute(
        text("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
    )
    return bool(found.scalar())


def upgrade() -> None:
    op.execute(UPGRADE)
    op.execute(COUNT_FUNCTIONS)
    for role in ROLES:
        op.execute(GRANTS.format(role=role))
    if has_citus():
        # One statement at a time: Citus sends some commands on to the workers as the
        # text they came in, which must then be that one command.
        for statement in DISTRIBUTE.split(";\n"):
            if statement.strip():
                op.execute(statement)


def downgrade() -> None:
    if has_citus():
        raise NotImplementedError("a distributed schema is not taken back by a migration")
    op.execute(DOWNGRADE)
