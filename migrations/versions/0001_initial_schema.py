"""The initial schema: sources, url_frontier, host_state, feed_state, fetch_log,
seeded_sources, raw_content, and the frontier's maintained counters.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

UPGRADE = r"""
-- Sources: where URLs come from. `manual` receives imports that name no source.
CREATE TABLE sources (
    id                          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                        text NOT NULL UNIQUE
                                CHECK (length(btrim(name)) BETWEEN 1 AND 200),
    base_url                    text,
    feed_url                    text,
    sitemap_url                 text,
    ingestion_mode              text NOT NULL DEFAULT 'feed'
                                CHECK (ingestion_mode IN ('feed', 'spider', 'both')),
    feed_poll_interval_minutes  integer NOT NULL DEFAULT 15
                                CHECK (feed_poll_interval_minutes BETWEEN 1 AND 43200),
    priority                    smallint NOT NULL DEFAULT 5 CHECK (priority BETWEEN 1 AND 10),
    rate_limit_ms               integer CHECK (rate_limit_ms >= 0),
    fetchprotection             smallint NOT NULL DEFAULT 2 CHECK (fetchprotection BETWEEN 0 AND 2),
    selectors                   jsonb
                                CHECK (selectors IS NULL OR jsonb_typeof(selectors) = 'object'),
    article_url_patterns        text[],
    url_filters                 jsonb
                                CHECK (url_filters IS NULL OR jsonb_typeof(url_filters) = 'object'),
    min_published_at            timestamptz,
    keep_trailing_slash         boolean NOT NULL DEFAULT false,
    enabled                     boolean NOT NULL DEFAULT true,
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO sources (name, ingestion_mode) VALUES ('manual', 'feed');

-- The frontier: one row per normalised URL, keyed by the SHA-256 of that URL.
CREATE TABLE url_frontier (
    -- (A negated character class costs a tenth of an anchored regex per row.)
    url_hash        char(64) PRIMARY KEY
                    CHECK (length(url_hash) = 64 AND url_hash !~ '[^0-9a-f]'),
    -- The first 128 bits of the hash: stable across re-imports, and no random-number
    -- call per inserted row.
    id              uuid GENERATED ALWAYS AS (CAST(substr(url_hash, 1, 32) AS uuid)) STORED,
    url             text NOT NULL CHECK (length(url) <= 4096),
    host            text NOT NULL,
    source_id       uuid REFERENCES sources (id) ON DELETE SET NULL,
    origin          text NOT NULL CHECK (origin IN ('feed', 'sitemap', 'spider', 'manual')),
    parent_url      text,
    depth           integer NOT NULL DEFAULT 0 CHECK (depth >= 0),
    priority        smallint NOT NULL DEFAULT 5 CHECK (priority BETWEEN 1 AND 10),
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'fetching', 'fetched', 'failed', 'dead')),
    next_fetch_at   timestamptz NOT NULL DEFAULT now(),
    last_fetched_at timestamptz,
    fetch_count     integer NOT NULL DEFAULT 0,
    content_hash    char(64),
    etag            text,
    last_modified   text,
    retry_count     integer NOT NULL DEFAULT 0,
    last_error      text,
    discovered_at   timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    claimed_by      text,
    lease_until     timestamptz,
    discovery_meta  jsonb CHECK (discovery_meta IS NULL OR jsonb_typeof(discovery_meta) = 'object'),
    dead_reason     text CHECK (dead_reason IN ('not_found', 'gone', 'robots_blocked', 'redirect',
                        'max_retries', 'duplicate_content', 'unsupported_content',
                        'blocked_by_policy')),
    final_url       text,
    http_status     smallint,
    CONSTRAINT url_frontier_dead_has_reason CHECK ((status = 'dead') = (dead_reason IS NOT NULL)),
    CONSTRAINT url_frontier_fetching_is_leased
        CHECK (status <> 'fetching' OR (claimed_by IS NOT NULL AND lease_until IS NOT NULL))
);
-- The claim: each host's best due URL.
CREATE INDEX url_frontier_due_idx ON url_frontier (host, priority DESC, next_fetch_at)
    WHERE status = 'pending';
-- The reaper: expired leases.
CREATE INDEX url_frontier_lease_idx ON url_frontier (lease_until) WHERE status = 'fetching';
CREATE INDEX url_frontier_source_status_idx ON url_frontier (source_id, status);
CREATE INDEX url_frontier_content_hash_idx ON url_frontier (content_hash)
    WHERE content_hash IS NOT NULL;
ALTER TABLE url_frontier SET (
    fillfactor = 90,
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_vacuum_cost_delay = 1
);

-- Per-host politeness and the summary of each host's pending work that the claim reads.
CREATE TABLE host_state (
    host                 text PRIMARY KEY,
    last_fetch_at        timestamptz,
    min_delay_ms         integer NOT NULL DEFAULT 1000 CHECK (min_delay_ms >= 0),
    robots_txt           text,
    robots_fetched_at    timestamptz,
    robots_ttl_hours     integer NOT NULL DEFAULT 24 CHECK (robots_ttl_hours > 0),
    next_allowed_at      timestamptz NOT NULL DEFAULT '-infinity',
    robots_status        text NOT NULL DEFAULT 'unknown'
                         CHECK (robots_status IN ('ok', 'allow_all', 'disallow_all', 'unknown')),
    crawl_delay_ms       integer CHECK (crawl_delay_ms >= 0),
    backoff_until        timestamptz,
    consecutive_failures integer NOT NULL DEFAULT 0,
    lease_owner          text,
    lease_until          timestamptz,
    -- Kept by the queue's own statements: how many URLs of this host are pending, the best
    -- pending priority, and the earliest next_fetch_at among them (null: nothing pending).
    pending_count        integer NOT NULL DEFAULT 0,
    pending_priority     smallint,
    pending_due_at       timestamptz,
    -- When this host may next be claimed; null while it has nothing pending.
    ready_at             timestamptz GENERATED ALWAYS AS (
                             CASE WHEN pending_due_at IS NULL THEN NULL
                             ELSE greatest(next_allowed_at, pending_due_at,
                                           coalesce(backoff_until, '-infinity'::timestamptz),
                                           coalesce(lease_until, '-infinity'::timestamptz))
                             END) STORED,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX host_state_ready_idx ON host_state (pending_priority DESC, ready_at)
    WHERE ready_at IS NOT NULL;
ALTER TABLE host_state SET (
    fillfactor = 70,
    autovacuum_vacuum_scale_factor = 0.0,
    autovacuum_vacuum_threshold = 2000,
    autovacuum_analyze_scale_factor = 0.05,
    autovacuum_vacuum_cost_delay = 0
);

-- Polling state of each source's feed and sitemap.
CREATE TABLE feed_state (
    source_id             uuid PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
    feed_url              text,
    last_polled_at        timestamptz,
    last_etag             text,
    last_modified         text,
    last_item_count       integer,
    consecutive_errors    integer NOT NULL DEFAULT 0,
    last_error            text,
    next_poll_at          timestamptz NOT NULL DEFAULT now(),
    sitemap_next_poll_at  timestamptz NOT NULL DEFAULT now(),
    poll_lease_until      timestamptz,
    poll_lease_owner      text,
    sitemap_etag          text,
    sitemap_last_modified text,
    last_fired_at         timestamptz,
    last_outcome          text
);
CREATE INDEX feed_state_next_poll_idx ON feed_state (next_poll_at);
CREATE INDEX feed_state_sitemap_next_poll_idx ON feed_state (sitemap_next_poll_at);

-- One row per poll or fetch attempt.
CREATE TABLE fetch_log (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind        text NOT NULL CHECK (kind IN ('feed', 'sitemap', 'robots', 'page', 'spider')),
    source_id   uuid REFERENCES sources (id) ON DELETE SET NULL,
    url         text NOT NULL,
    outcome     text NOT NULL CHECK (outcome IN ('ok', 'ok_no_new', 'not_modified', 'failed',
                    'blocked', 'redirect', 'not_found', 'gone', 'rate_limited', 'deferred',
                    'duplicate', 'unsupported', 'refused')),
    http_status smallint,
    items_seen  integer,
    items_new   integer,
    elapsed_ms  integer CHECK (elapsed_ms >= 0),
    error       text,
    at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX fetch_log_at_idx ON fetch_log (at);
CREATE INDEX fetch_log_source_at_idx ON fetch_log (source_id, at);

-- Initial sources seeded once, so a default an operator deleted never comes back.
CREATE TABLE seeded_sources (
    url       text PRIMARY KEY,
    seeded_at timestamptz NOT NULL DEFAULT now()
);

-- The PostgreSQL content sink: one document per fetched URL, the same shape as the
-- Elasticsearch index `raw_content`.
CREATE TABLE raw_content (
    url_hash     char(64) PRIMARY KEY
                 CHECK (length(url_hash) = 64 AND url_hash !~ '[^0-9a-f]'),
    url          text NOT NULL,
    final_url    text,
    source_id    uuid REFERENCES sources (id) ON DELETE SET NULL,
    source_name  text,
    host         text NOT NULL,
    origin       text NOT NULL CHECK (origin IN ('feed', 'sitemap', 'spider', 'manual')),
    title        text,
    body         text,
    summary      text,
    author       text,
    published_at timestamptz,
    image_url    text,
    language     text,
    content_hash char(64),
    word_count   integer CHECK (word_count >= 0),
    extractor    text CHECK (extractor IN ('selectors', 'generic', 'feed')),
    http_status  smallint,
    fetched_at   timestamptz NOT NULL
);
CREATE INDEX raw_content_content_hash_idx ON raw_content (content_hash);
CREATE INDEX raw_content_fetched_at_idx ON raw_content (fetched_at);

-- Maintained counters of url_frontier by (source, origin, status). Statement triggers
-- append deltas (insert-only, so concurrent writers never contend on a counter row);
-- `compact_frontier_counts` folds old deltas into one row per key.
CREATE TABLE frontier_counts (
    source_id uuid,
    origin    text NOT NULL,
    status    text NOT NULL,
    n         bigint NOT NULL,
    at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX frontier_counts_at_idx ON frontier_counts (at);
ALTER TABLE frontier_counts SET (
    autovacuum_vacuum_scale_factor = 0.0,
    autovacuum_vacuum_threshold = 1000
);

CREATE FUNCTION url_frontier_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO frontier_counts (source_id, origin, status, n)
    SELECT source_id, origin, status, count(*) FROM new_rows GROUP BY 1, 2, 3;
    RETURN NULL;
END $$;

CREATE FUNCTION url_frontier_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE FUNCTION url_frontier_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO frontier_counts (source_id, origin, status, n)
    SELECT source_id, origin, status, -count(*) FROM old_rows GROUP BY 1, 2, 3;
    RETURN NULL;
END $$;

CREATE TRIGGER url_frontier_count_inserted AFTER INSERT ON url_frontier
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION url_frontier_count_inserted();
CREATE TRIGGER url_frontier_count_updated AFTER UPDATE ON url_frontier
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION url_frontier_count_updated();
CREATE TRIGGER url_frontier_count_deleted AFTER DELETE ON url_frontier
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION url_frontier_count_deleted();
"""

DOWNGRADE = """
DROP TABLE IF EXISTS frontier_counts;
DROP TABLE IF EXISTS raw_content;
DROP TABLE IF EXISTS seeded_sources;
DROP TABLE IF EXISTS fetch_log;
DROP TABLE IF EXISTS feed_state;
DROP TABLE IF EXISTS host_state;
DROP TABLE IF EXISTS url_frontier;
DROP TABLE IF EXISTS sources;
DROP FUNCTION IF EXISTS url_frontier_count_inserted();
DROP FUNCTION IF EXISTS url_frontier_count_updated();
DROP FUNCTION IF EXISTS url_frontier_count_deleted();
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
