-- seeded_sources: URLs of default sources already seeded once.

-- name: claim_new
-- Record the URLs in $1 not seeded before; returns only those (seed them now).
INSERT INTO seeded_sources (url)
SELECT DISTINCT u FROM unnest($1::text[]) AS u
ON CONFLICT (url) DO NOTHING
RETURNING url;
