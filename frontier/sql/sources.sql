-- Sources: every write to `sources` is here, made by frontier.sources.SourceRepository.
-- The repository owns a source's configuration: the `sources` columns, and the options a
-- source sets in the poller's and the spider's rows (feed_state.adaptive_interval,
-- spider_state's interval_minutes, allow_external, listing_urls). The poller and the
-- spider own the rest of those rows, their state, and write it in feeds.sql / spider.sql.
--
-- A configuration arrives as one JSON object keyed by the schema's field names
-- (frontier/source_schema.py); jsonb_populate_record turns it into a `sources` row, so
-- no column list is kept in Python.

-- name: insert
-- A source from a complete configuration $1 (every column given), with its feed_state
-- row. No row: the name is taken.
WITH config AS (SELECT * FROM jsonb_populate_record(NULL::sources, $1::jsonb)),
source AS (
    INSERT INTO sources (name, base_url, feed_url, sitemap_url, ingestion_mode,
                         feed_poll_interval_minutes, priority, rate_limit_ms, fetchprotection,
                         selectors, article_url_patterns, url_filters, min_published_at,
                         keep_trailing_slash, enabled, kind, config, revisit, politeness_key,
                         languages, access, proxy, render)
    SELECT name, base_url, feed_url, sitemap_url, ingestion_mode, feed_poll_interval_minutes,
           priority, rate_limit_ms, fetchprotection, selectors, article_url_patterns,
           url_filters, min_published_at, keep_trailing_slash, enabled,
           coalesce(kind, 'feed'), coalesce(config, '{}'), revisit, politeness_key, languages,
           access, proxy, coalesce(render, 'never')
    FROM config
    ON CONFLICT (name) DO NOTHING
    RETURNING *
),
state AS (
    INSERT INTO feed_state (source_id, feed_url, adaptive_interval)
    SELECT id, feed_url, coalesce(($1::jsonb ->> 'adaptive_interval')::boolean, false)
    FROM source
)
SELECT * FROM source;

-- name: update_by_id
-- Change source $1's configuration: only the keys present in $2 change (a key with null
-- sets NULL). No row: no such source.
WITH config AS (SELECT * FROM jsonb_populate_record(NULL::sources, $2::jsonb)),
source AS (
    UPDATE sources s SET
        name = CASE WHEN $2::jsonb ? 'name' THEN c.name ELSE s.name END,
        base_url = CASE WHEN $2 ? 'base_url' THEN c.base_url ELSE s.base_url END,
        feed_url = CASE WHEN $2 ? 'feed_url' THEN c.feed_url ELSE s.feed_url END,
        sitemap_url = CASE WHEN $2 ? 'sitemap_url' THEN c.sitemap_url ELSE s.sitemap_url END,
        ingestion_mode = CASE WHEN $2 ? 'ingestion_mode' THEN c.ingestion_mode
                         ELSE s.ingestion_mode END,
        feed_poll_interval_minutes = CASE WHEN $2 ? 'feed_poll_interval_minutes'
                                     THEN c.feed_poll_interval_minutes
                                     ELSE s.feed_poll_interval_minutes END,
        priority = CASE WHEN $2 ? 'priority' THEN c.priority ELSE s.priority END,
        rate_limit_ms = CASE WHEN $2 ? 'rate_limit_ms' THEN c.rate_limit_ms
                        ELSE s.rate_limit_ms END,
        fetchprotection = CASE WHEN $2 ? 'fetchprotection' THEN c.fetchprotection
                          ELSE s.fetchprotection END,
        selectors = CASE WHEN $2 ? 'selectors' THEN c.selectors ELSE s.selectors END,
        article_url_patterns = CASE WHEN $2 ? 'article_url_patterns'
                               THEN c.article_url_patterns ELSE s.article_url_patterns END,
        url_filters = CASE WHEN $2 ? 'url_filters' THEN c.url_filters ELSE s.url_filters END,
        min_published_at = CASE WHEN $2 ? 'min_published_at' THEN c.min_published_at
                           ELSE s.min_published_at END,
        keep_trailing_slash = CASE WHEN $2 ? 'keep_trailing_slash' THEN c.keep_trailing_slash
                              ELSE s.keep_trailing_slash END,
        enabled = CASE WHEN $2 ? 'enabled' THEN c.enabled ELSE s.enabled END,
        kind = CASE WHEN $2 ? 'kind' THEN c.kind ELSE s.kind END,
        config = CASE WHEN $2 ? 'config' THEN c.config ELSE s.config END,
        revisit = CASE WHEN $2 ? 'revisit' THEN c.revisit ELSE s.revisit END,
        politeness_key = CASE WHEN $2 ? 'politeness_key' THEN c.politeness_key
                         ELSE s.politeness_key END,
        languages = CASE WHEN $2 ? 'languages' THEN c.languages ELSE s.languages END,
        access = CASE WHEN $2 ? 'access' THEN c.access ELSE s.access END,
        proxy = CASE WHEN $2 ? 'proxy' THEN c.proxy ELSE s.proxy END,
        render = CASE WHEN $2 ? 'render' THEN c.render ELSE s.render END,
        updated_at = now()
    FROM config c
    WHERE s.id = $1
    RETURNING s.*
),
state AS (
    UPDATE feed_state f
    SET feed_url = CASE WHEN $2 ? 'feed_url' THEN s.feed_url ELSE f.feed_url END,
        adaptive_interval = CASE WHEN $2 ? 'adaptive_interval'
                            THEN ($2 ->> 'adaptive_interval')::boolean
                            ELSE f.adaptive_interval END
    FROM source s
    WHERE f.source_id = s.id
)
SELECT * FROM source;

-- name: ensure_spider_state
-- Give source $1 its spider_state row (the spider's defaults) if it has none yet.
INSERT INTO spider_state (source_id) VALUES ($1) ON CONFLICT (source_id) DO NOTHING;

-- name: set_spider_options
-- Change source $1's spider options: only the keys present in $2 change. A shorter
-- interval brings the next run forward to one interval after the last.
WITH options AS (
    SELECT ($2::jsonb ->> 'spider_interval_minutes')::int AS interval_minutes,
           ($2::jsonb ->> 'spider_allow_external')::boolean AS allow_external,
           ARRAY(SELECT jsonb_array_elements_text($2::jsonb -> 'spider_listing_urls'))
               AS listing_urls
)
UPDATE spider_state st SET
    interval_minutes = CASE WHEN $2 ? 'spider_interval_minutes' THEN o.interval_minutes
                       ELSE st.interval_minutes END,
    allow_external = CASE WHEN $2 ? 'spider_allow_external' THEN o.allow_external
                     ELSE st.allow_external END,
    listing_urls = CASE WHEN $2 ? 'spider_listing_urls' THEN o.listing_urls
                   ELSE st.listing_urls END,
    spider_next_run_at = CASE WHEN $2 ? 'spider_interval_minutes'
                         THEN least(st.spider_next_run_at,
                                    coalesce(st.last_run_at, '-infinity')
                                        + make_interval(mins => o.interval_minutes))
                         ELSE st.spider_next_run_at END,
    updated_at = now()
FROM options o
WHERE st.source_id = $1;

-- name: set_feed_url
-- A feed URL found by discovery or moved by a permanent redirect (the poller's write).
WITH state AS (UPDATE feed_state SET feed_url = $2 WHERE source_id = $1)
UPDATE sources SET feed_url = $2, updated_at = now() WHERE id = $1;

-- name: disable
-- The feed is gone (410): stop polling the source and record why, at $3 (NULL: now()).
WITH state AS (
    UPDATE feed_state
    SET disabled_reason = $2, disabled_at = coalesce($3::timestamptz, now())
    WHERE source_id = $1
)
UPDATE sources SET enabled = false, updated_at = now() WHERE id = $1;

-- name: delete
DELETE FROM sources WHERE name = $1 RETURNING id;

-- name: delete_by_id
DELETE FROM sources WHERE id = $1 RETURNING id;

-- name: by_name
SELECT * FROM sources WHERE name = $1;

-- name: by_id
SELECT * FROM sources WHERE id = $1;

-- name: by_ids
SELECT * FROM sources WHERE id = ANY($1::uuid[]);

-- name: list
SELECT * FROM sources ORDER BY name;

-- name: options
-- The options sources $1 set in the poller's and the spider's rows (NULL where a source
-- has no such row yet: the defaults apply).
SELECT s.id, f.adaptive_interval, st.interval_minutes AS spider_interval_minutes,
       st.allow_external AS spider_allow_external, st.listing_urls AS spider_listing_urls
FROM sources s
LEFT JOIN feed_state f ON f.source_id = s.id
LEFT JOIN spider_state st ON st.source_id = s.id
WHERE s.id = ANY($1::uuid[]);

-- name: apply_rate_limit
-- Source $1's rate_limit_ms changed: every host holding its URLs takes as its
-- source_delay_ms the largest rate_limit_ms among source $1 and the sources of the host's
-- pending URLs (NULL when none of them sets one: the host's default delay applies). The
-- claim reads the host's delay from host_state.delay_ms, generated from this, so the
-- next claim on the host keeps the new delay. The hosts are found through the
-- (source_id, status) index, each host's pending sources through the claim's index. The
-- hosts of bucket $2 (queue.sql's header): the caller runs it for every bucket.
WITH hosts AS (
    SELECT DISTINCT host FROM url_frontier WHERE bucket = $2::int AND source_id = $1
),
locked AS (
    SELECT h.host FROM host_state h JOIN hosts USING (host)
    WHERE h.bucket = $2::int
    ORDER BY h.host FOR UPDATE OF h
),
limits AS (
    SELECT l.host,
           (SELECT max(s.rate_limit_ms) FROM sources s
            WHERE s.id = $1
               OR s.id IN (SELECT u.source_id FROM url_frontier u
                           WHERE u.bucket = $2::int AND u.host = l.host
                             AND u.status = 'pending')) AS delay_ms
    FROM locked l
)
UPDATE host_state h
SET source_delay_ms = l.delay_ms
FROM limits l
WHERE h.bucket = $2::int AND h.host = l.host AND h.source_delay_ms IS DISTINCT FROM l.delay_ms;

-- name: poll_errors
-- The poller's last error on sources $1 (those that have one).
SELECT source_id, last_error FROM feed_state
WHERE source_id = ANY($1::uuid[]) AND last_error IS NOT NULL;
