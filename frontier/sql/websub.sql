-- websub_subscriptions and websub_notifications (migration 0045): the poller's
-- subscriptions to the hubs its feeds declare, and the notifications the API's callback
-- accepted for the poller to apply. The API verifies intents and stores notifications;
-- the poller asks the hubs, renews, unsubscribes and applies the notifications.

-- name: declared
-- Source $1's feed declares hub $2 for topic $3: a new subscription (secret $4) to ask
-- for, or the same one kept as it is. A subscription of the source to another hub or
-- topic is unsubscribed (its own row, with its hub, topic and secret, until that hub
-- verifies it: migration 0046), and the new one asked beside it; one being unsubscribed
-- from this very hub and topic is left to end, and a new one asked. Returns the new row.
-- The INSERT reads the CTE's count so that the UPDATE runs first (a CTE nobody reads
-- runs after the main statement, whose unique check would then meet the old row); a
-- unique check passes over a row version this transaction replaced.
-- A source keeps at most one subscription being unsubscribed: an older one still waiting
-- for its hub goes when the feed moves again (its lease runs out on its own), so a feed
-- that names a new hub at every poll, to hubs that never answer, keeps two rows, not one
-- more a poll. (The DELETE sees the rows as the statement found them: not the one `moved`
-- turns to 'unsubscribing'.)
WITH older AS (
    DELETE FROM websub_subscriptions
    WHERE source_id = $1 AND state = 'unsubscribing'
      AND EXISTS (
          SELECT 1 FROM websub_subscriptions
          WHERE source_id = $1 AND state <> 'unsubscribing'
            AND (hub, topic) IS DISTINCT FROM ($2, $3)
      )
),
moved AS (
    UPDATE websub_subscriptions
    SET state = 'unsubscribing', requested_at = NULL
    WHERE source_id = $1 AND state <> 'unsubscribing'
      AND (hub, topic) IS DISTINCT FROM ($2, $3)
    RETURNING id
)
INSERT INTO websub_subscriptions (source_id, hub, topic, secret)
SELECT $1, $2, $3, $4
FROM (SELECT count(*) FROM moved) AS first_the_move
WHERE NOT EXISTS (
    SELECT 1 FROM websub_subscriptions
    WHERE source_id = $1 AND state <> 'unsubscribing' AND (hub, topic) = ($2, $3)
)
ON CONFLICT (source_id) WHERE state <> 'unsubscribing' DO NOTHING
RETURNING id;

-- name: undeclared
-- Source $1's feed no longer declares a hub: unsubscribe at the next look.
UPDATE websub_subscriptions
SET state = 'unsubscribing', requested_at = NULL
WHERE source_id = $1 AND state <> 'unsubscribing';

-- name: orphaned
-- Subscriptions whose source was removed or disabled: unsubscribe at the next look.
-- Found in a CTE, not in the UPDATE's WHERE: on Citus, where sources is a reference table
-- and websub_subscriptions a plain table on the coordinator (migration 0045), an UPDATE
-- of the one reading the other is refused ("relation websub_subscriptions is not
-- distributed") or sent to a worker, which has no such table; the CTE is planned apart.
WITH gone AS (
    SELECT w.id FROM websub_subscriptions w
    WHERE w.state <> 'unsubscribing'
      AND NOT EXISTS (SELECT 1 FROM sources s WHERE s.id = w.source_id AND s.enabled)
)
UPDATE websub_subscriptions w
SET state = 'unsubscribing', requested_at = NULL
FROM gone
WHERE w.id = gone.id AND w.state <> 'unsubscribing';

-- name: take_due
-- Up to $1 subscriptions with a request to send to their hub at $2 (NULL: now()): asked
-- for and not sent yet, or sent more than $4 seconds ago without an answer (also an
-- unsubscription); active with a lease ending within $3 seconds or half the lease the hub
-- granted, whichever is shorter, and not renewed since it was verified (renew); denied
-- more than a day ago. Marked as sent at $2, so that another poller does not take them.
WITH clock AS (SELECT coalesce($2::timestamptz, now()) AS now),
due AS (
    SELECT w.id FROM websub_subscriptions w CROSS JOIN clock c
    WHERE (w.requested_at IS NULL OR w.requested_at <= frontier_after(c.now, -$4::float8)
           OR (w.state = 'active' AND w.requested_at <= w.verified_at))
      AND (w.state IN ('requested', 'unsubscribing')
           OR (w.state = 'active' AND w.lease_until <= frontier_after(c.now, least(
                   $3::float8, extract(epoch FROM w.lease_until - w.verified_at)::float8 / 2)))
           OR (w.state = 'denied' AND w.requested_at <= frontier_after(c.now, -86400.0)))
    ORDER BY w.requested_at NULLS FIRST
    LIMIT $1
    FOR UPDATE OF w SKIP LOCKED
)
UPDATE websub_subscriptions w SET requested_at = c.now
FROM due, clock c
WHERE w.id = due.id
RETURNING w.*;

-- name: request_failed
-- The hub refused or did not answer the request for subscription $1 (error $2).
UPDATE websub_subscriptions SET last_error = $2 WHERE id = $1;

-- name: forget
-- Subscription $1 ends here (unsubscribed, or a hub that refuses the unsubscription).
DELETE FROM websub_subscriptions WHERE id = $1;

-- name: by_id
SELECT * FROM websub_subscriptions WHERE id = $1;

-- name: active_sources
-- Which of sources $1 have a subscription active at $2 (their polls are the fallback).
SELECT source_id FROM websub_subscriptions
WHERE source_id = ANY($1::uuid[]) AND state = 'active' AND lease_until > $2;

-- name: verified
-- The hub verified the subscription $1 to topic $2 for $3 seconds (at $4, NULL: now()).
WITH clock AS (SELECT coalesce($4::timestamptz, now()) AS now)
UPDATE websub_subscriptions w
SET state = 'active', verified_at = c.now, lease_until = frontier_after(c.now, $3::float8),
    last_error = NULL
FROM clock c
WHERE w.id = $1 AND w.topic = $2 AND w.state IN ('requested', 'active')
RETURNING w.id;

-- name: unsubscribed
-- The hub verified the unsubscription $1 of topic $2: the row goes.
DELETE FROM websub_subscriptions
WHERE id = $1 AND topic = $2 AND state = 'unsubscribing'
RETURNING id;

-- name: denied
-- The hub denied subscription $1 to topic $2, for reason $3.
UPDATE websub_subscriptions
SET state = 'denied', lease_until = NULL, last_error = $3
WHERE id = $1 AND topic = $2 AND state <> 'unsubscribing'
RETURNING id;

-- name: notified
-- A notification for subscription $1 whose signature holds (content type $2, body $3):
-- kept for the poller, counted, and the pollers woken.
WITH kept AS (
    INSERT INTO websub_notifications (subscription_id, content_type, body)
    VALUES ($1, $2, $3)
    RETURNING subscription_id
),
counted AS (
    UPDATE websub_subscriptions w
    SET notifications = notifications + 1, last_notified_at = now()
    FROM kept WHERE w.id = kept.subscription_id
    RETURNING w.id
)
SELECT pg_notify('frontier_websub', id::text) FROM counted;

-- name: bad_signature
-- A notification for subscription $1 without a valid signature ($2 says what was wrong):
-- ignored, counted.
UPDATE websub_subscriptions
SET bad_signatures = bad_signatures + 1, last_error = $2
WHERE id = $1;

-- name: take_notifications
-- Up to $1 notifications, oldest first, each with its subscription's source and topic,
-- leased for $2 seconds: deleted by `applied` once submitted, taken again by any poller
-- once the lease ends (a poller that died on the way loses nothing).
WITH taken AS (
    SELECT id FROM websub_notifications
    WHERE lease_until IS NULL OR lease_until <= now()
    ORDER BY received_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED
)
UPDATE websub_notifications n SET lease_until = frontier_after(now(), $2::float8)
FROM taken, websub_subscriptions w
WHERE n.id = taken.id AND w.id = n.subscription_id
RETURNING n.id, n.content_type, n.body, n.received_at, w.source_id, w.topic;

-- name: applied
DELETE FROM websub_notifications WHERE id = ANY($1::uuid[]);
