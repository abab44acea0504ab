-- Dashboard sessions kept on the server (migration 0030): a session cookie acts only while
-- its row exists and has not expired. Only the API uses this table.

-- name: open
-- A new session ($1 its cookie's nonce, $2 role, $3 expiry in Unix seconds); the expired
-- rows go at the same time, so the table holds only live sessions and the latest logins.
WITH pruned AS (
    DELETE FROM api_sessions WHERE expires_at <= now()
)
INSERT INTO api_sessions (id, role, expires_at)
VALUES ($1, $2, to_timestamp($3));

-- name: alive
-- Whether the session $1 is still open (by primary key).
SELECT EXISTS (SELECT FROM api_sessions WHERE id = $1 AND expires_at > now());

-- name: close
-- Logging out: the session $1 ends on the server, whoever replays its cookie later.
DELETE FROM api_sessions WHERE id = $1;
