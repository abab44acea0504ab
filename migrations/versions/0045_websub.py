"""WebSub push (issue 32 item 5): the poller's subscriptions to the hubs its feeds
declare, and the notifications the API's callback received for the poller to apply.

`websub_subscriptions` holds one row per source whose feed declares a hub: the topic (the
feed's `rel="self"`), the hub, the secret the hub signs each notification with (random per
subscription, never logged), the state of the subscription and its lease. It names its
source without a foreign key, so that removing a source leaves the row for the poller to
unsubscribe from the hub before deleting it. `websub_notifications` holds the bodies the
callback accepted (signature checked) until a poller has parsed and submitted them (each
leased while one does): the API never parses a feed, and a notification that comes while
no poller runs waits here.

On Citus both stay plain tables on the coordinator, like api_sessions: only the poller and
the API read and write them, by key, never joined with a distributed table.

Revision ID: 0045
Revises: 0044
Create Date: 2026-11-28
"""

from alembic import op

revision = "0045"
down_revision = "0044"
branch_labels = None
depends_on = None

UPGRADE = (
    """
    CREATE TABLE websub_subscriptions (
        id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),  -- the callback's path
        source_id         uuid NOT NULL UNIQUE,  -- no foreign key: see the docstring
        topic             text NOT NULL,
        hub               text NOT NULL,
        secret            text NOT NULL,
        state             text NOT NULL DEFAULT 'requested'
                          CHECK (state IN ('requested', 'active', 'denied', 'unsubscribing')),
        lease_until       timestamptz,
        requested_at      timestamptz,
        verified_at       timestamptz,
        last_notified_at  timestamptz,
        notifications     bigint NOT NULL DEFAULT 0,
        bad_signatures    bigint NOT NULL DEFAULT 0,
        last_error        text,
        created_at        timestamptz NOT NULL DEFAULT now()
    )
    """,
    """
    CREATE TABLE websub_notifications (
        id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        subscription_id  uuid NOT NULL
                         REFERENCES websub_subscriptions (id) ON DELETE CASCADE,
        content_type     text,
        body             bytea NOT NULL,
        received_at      timestamptz NOT NULL DEFAULT now(),
        lease_until      timestamptz  -- a poller applies it until then
    )
    """,
    "CREATE INDEX websub_notifications_received_idx ON websub_notifications (received_at)",
    "GRANT SELECT, INSERT, UPDATE, DELETE ON websub_subscriptions TO frontier_poller",
    "GRANT SELECT, UPDATE, DELETE ON websub_notifications TO frontier_poller",
    # the callback: verify (update), a verified unsubscription (delete), a notification
    # (insert ... returning, so select too)
    "GRANT SELECT, UPDATE, DELETE ON websub_subscriptions TO frontier_api",
    "GRANT SELECT, INSERT ON websub_notifications TO frontier_api",
)


def upgrade() -> None:
    for statement in UPGRADE:  # one at a time, as Citus wants them (migration 0022)
        op.execute(statement)


def downgrade() -> None:
    op.execute("DROP TABLE websub_notifications")
    op.execute("DROP TABLE websub_subscriptions")
