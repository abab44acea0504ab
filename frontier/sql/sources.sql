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
