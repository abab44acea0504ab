-- Sources and their polling state rows.

-- name: insert
WITH source AS (
    INSERT INTO sources (name, base_url, feed_url, sitemap_url, ingestion_mode,
                         feed_poll_interval_minutes, priority, rate_limit_ms,
                         article_url_patterns)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
    ON CONFLICT (name) DO NOTHING
    RETURNING *
),
state AS (
    INSERT INTO feed_state (source_id, feed_url)
    SELECT id, feed_url FROM source
)
SELECT * FROM source;

-- name: by_name
SELECT * FROM sources WHERE name = $1;

-- name: list
SELECT * FROM sources ORDER BY name;

-- name: delete
DELETE FROM sources WHERE name = $1 RETURNING id;

-- name: by_id
SELECT * FROM sources WHERE id = $1;

-- name: insert_full
-- A source with every editable column ($1..$15, in the order of EDITABLE in sources.py);
-- NULL for a column with a default takes the default.
WITH source AS (
    INSERT INTO sources (name, base_url, feed_url, sitemap_url, ingestion_mode,
                         feed_poll_interval_minutes, priority, rate_limit_ms, fetchprotection,
                         selectors, article_url_patterns, url_filters, min_published_at,
                         keep_trailing_slash, enabled)
    VALUES ($1, $2, $3, $4, coalesce($5, 'feed'), coalesce($6, 15), coalesce($7, 5), $8,
            coalesce($9, 2), $10::jsonb, $11, $12::jsonb, $13, coalesce($14, false),
            coalesce($15, true))
    ON CONFLICT (name) DO NOTHING
    RETURNING *
),
state AS (
    INSERT INTO feed_state (source_id, feed_url)
    SELECT id, feed_url FROM source
)
SELECT * FROM source;

-- name: update_by_id
-- Change the columns of source $1 named in $2 to the values $3..$17 (EDITABLE order);
-- the others keep their value. No row: no such source.
WITH source AS (
    UPDATE sources SET
        name = CASE WHEN 'name' = ANY ($2::text[]) THEN $3 ELSE name END,
        base_url = CASE WHEN 'base_url' = ANY ($2) THEN $4 ELSE base_url END,
        feed_url = CASE WHEN 'feed_url' = ANY ($2) THEN $5 ELSE feed_url END,
        sitemap_url = CASE WHEN 'sitemap_url' = ANY ($2) THEN $6 ELSE sitemap_url END,
        ingestion_mode = CASE WHEN 'ingestion_mode' = ANY ($2) THEN $7 ELSE ingestion_mode END,
        feed_poll_interval_minutes = CASE WHEN 'feed_poll_interval_minutes' = ANY ($2)
                                          THEN $8 ELSE feed_poll_interval_minutes END,
        priority = CASE WHEN 'priority' = ANY ($2) THEN $9 ELSE priority END,
        rate_limit_ms = CASE WHEN 'rate_limit_ms' = ANY ($2) THEN $10 ELSE rate_limit_ms END,
        fetchprotection = CASE WHEN 'fetchprotection' = ANY ($2)
                               THEN $11 ELSE fetchprotection END,
        selectors = CASE WHEN 'selectors' = ANY ($2) THEN $12::jsonb ELSE selectors END,
        article_url_patterns = CASE WHEN 'article_url_patterns' = ANY ($2)
                                    THEN $13 ELSE article_url_patterns END,
        url_filters = CASE WHEN 'url_filters' = ANY ($2) THEN $14::jsonb ELSE url_filters END,
        min_published_at = CASE WHEN 'min_published_at' = ANY ($2)
                                THEN $15 ELSE min_published_at END,
        keep_trailing_slash = CASE WHEN 'keep_trailing_slash' = ANY ($2)
                                   THEN $16 ELSE keep_trailing_slash END,
        enabled = CASE WHEN 'enabled' = ANY ($2) THEN $17 ELSE enabled END,
        updated_at = now()
    WHERE id = $1
    RETURNING *
),
state AS (
    UPDATE feed_state f SET feed_url = s.feed_url
    FROM source s
    WHERE f.source_id = s.id AND 'feed_url' = ANY ($2)
)
SELECT * FROM source;

-- name: delete_by_id
DELETE FROM sources WHERE id = $1 RETURNING id;
