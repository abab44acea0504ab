"""The sinks' outbox (issue 33 item 2): what the optional sinks of FRONTIER_SINKS have yet
to receive (frontier/outbox.py; SQL in frontier/sql/sink_outbox.sql).

A row per (sink, idempotency key): a document's version to write, its payload the JSON text
of frontier/sinks/payload.py (text: written by frontier's own encoder, it is not parsed
again on the way in), or a URL's document to delete. The fetcher writes the rows in
the transaction that completes the URLs, so a document `fetched` is never lost to an
optional sink; a delivery loop claims due rows with FOR UPDATE SKIP LOCKED under a lease
(a dead fetcher's rows come back when it runs out), deletes them once delivered, and puts
a failed one back with a later `next_at` (exponential backoff with jitter). A new version
of a URL supersedes the rows of its older ones still waiting.

On Citus it stays a plain table on the coordinator, like raw_content and
document_versions (migrations 0018, 0035): it is small (what is in flight), never joined
with a distributed table, and its claim (a multi-row FOR UPDATE SKIP LOCKED ordered by
due time) is one a distributed table would refuse across shards; a reference table would
replicate every write to each worker for nothing.

Revision ID: 0042
Revises: 0041
Create Date: 2026-11-28
"""

from alembic import op

revision = "0042"
down_revision = "0041"
branch_labels = None
depends_on = None

UPGRADE = (
    """
    CREATE TABLE sink_outbox (
        id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        sink        text NOT NULL,       -- the sink's name in FRONTIER_SINKS
        key         text NOT NULL,       -- the idempotency key (frontier.sinks.payload)
        url_hash    char(64) NOT NULL,
        op          text NOT NULL CHECK (op IN ('write', 'delete')),
        payload     text,                -- the document's JSON; NULL for a delete
        created_at  timestamptz NOT NULL DEFAULT now(),
        next_at     timestamptz NOT NULL DEFAULT now(),  -- due for (another) try
        attempts    integer NOT NULL DEFAULT 0,
        leased_by   text,
        lease_until timestamptz,
        last_error  text,
        failed_at   timestamptz,
        rejected    boolean NOT NULL DEFAULT false,      -- refused by the sink for good
        UNIQUE (sink, key)
    )
    """,
    # A row lives for as long as its delivery takes: its payload is stored out of line
    # uncompressed (compressing ~10 KB a document cost the server more than it saved).
    "ALTER TABLE sink_outbox ALTER COLUMN payload SET STORAGE EXTERNAL",
    "CREATE INDEX sink_outbox_due_idx ON sink_outbox (sink, next_at, id) WHERE NOT rejected",
    # a new version of a URL supersedes the rows of its older ones (sink_outbox.sql enqueue)
    "CREATE INDEX sink_outbox_url_idx ON sink_outbox (sink, url_hash)",
    "GRANT SELECT, INSERT, UPDATE, DELETE ON sink_outbox TO frontier_fetcher",
    "GRANT USAGE ON SEQUENCE sink_outbox_id_seq TO frontier_fetcher",
    "GRANT SELECT ON sink_outbox TO frontier_api",
)


def upgrade() -> None:
    for statement in UPGRADE:  # one at a time, as Citus wants them (migration 0022)
        op.execute(statement)


def downgrade() -> None:
    op.execute("DROP TABLE sink_outbox")
