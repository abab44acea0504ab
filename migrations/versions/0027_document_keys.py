"""Document keys: which URL holds a document's content hash and a canonical's article,
reserved atomically across every fetch process (docs/duplicates.md).

`document_keys` has one row per (key, kind): `content` rows are keyed by a document's
`content_hash`, `canonical` rows by the `url_hash` of a canonical URL some fetched page
named. The row names the URL holding it (whose document is stored), the canonical that
URL's page claimed (`canonical_claimed`), whether it is on its source's own site and when
it says it was published: what decides which of two URLs with the same text keeps the
document. The fetcher reserves a key with one `INSERT ... ON CONFLICT DO UPDATE` whose
condition is that preference, so two processes storing the same body at the same moment
are ordered by the primary key: one holds it, the other is its duplicate. The previous
holder of a key taken over is kept in `previous_*` until the new holder's document is
written and the previous one's removed.

The table is filled here from the frontier's fetched URLs with a content hash (the earliest
fetched holds it), so the URLs fetched before this revision keep deduplicating. The fetcher
may now remove documents from `raw_content` (a duplicate's, once the URL it duplicates holds
the article).

On Citus the table is distributed by its key (every statement on it names keys): its own
co-location group, since its key is not a bucket.

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None

UPGRADE = (
    """
    CREATE TABLE document_keys (
        key               char(64) NOT NULL,
        kind              text NOT NULL CHECK (kind IN ('content', 'canonical')),
        url_hash          char(64) NOT NULL,  -- the URL holding it
        url               text NOT NULL,
        host              text NOT NULL,
        canonical_claimed text,               -- the canonical the holder's page named
        own_host          boolean NOT NULL DEFAULT false,  -- on its source's own site
        published_at      timestamptz,
        previous_url_hash char(64),           -- the holder it was taken from, until relinked
        previous_url      text,
        previous_host     text,
        reserved_at       timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (key, kind)
    )
    """,
    "CREATE INDEX document_keys_holder_idx ON document_keys (url_hash)",
    """
    INSERT INTO document_keys (key, kind, url_hash, url, host, reserved_at)
    SELECT DISTINCT ON (content_hash) content_hash, 'content', url_hash, url, host,
           coalesce(last_fetched_at, updated_at)
    FROM url_frontier
    WHERE status = 'fetched' AND content_hash IS NOT NULL
    ORDER BY content_hash, last_fetched_at, url_hash
    """,
)

GRANTS = (
    "GRANT SELECT, INSERT, UPDATE, DELETE ON document_keys TO frontier_fetcher",
    "GRANT SELECT ON document_keys TO frontier_api",
    "GRANT DELETE ON raw_content TO frontier_fetcher",
    "GRANT DELETE ON raw_content_search TO frontier_fetcher",
)

DISTRIBUTE = "SELECT create_distributed_table('document_keys', 'key', colocate_with => 'none')"


def has_citus() -> bool:
    found = op.get_bind().execute(
        sa.text("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
    )
    return bool(found.scalar())


def upgrade() -> None:
    citus = has_citus()
    for statement in UPGRADE[:2]:  # one at a time, as Citus wants them (migration 0022)
        op.execute(statement)
    if citus:
        op.execute(DISTRIBUTE)  # before the fill: distributing an empty table is instant
    op.execute(UPGRADE[2])
    for grant in GRANTS:
        op.execute(grant)


def downgrade() -> None:
    op.execute("REVOKE DELETE ON raw_content_search FROM frontier_fetcher")
    op.execute("REVOKE DELETE ON raw_content FROM frontier_fetcher")
    op.execute("DROP TABLE document_keys")
