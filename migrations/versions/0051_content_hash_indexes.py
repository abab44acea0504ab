"""The two content-hash indexes that no statement reads: `raw_content_content_hash_idx`
and `url_frontier_content_hash_idx` (partial, `WHERE content_hash IS NOT NULL`), both of
migration 0001.

No statement of the code finds a row by its content hash: frontier/sql, the sinks, the
API, the documents' and versions' reads and the CLI read `content_hash` as a column of a
row found by its URL's hash (or a page of recent rows), and set it by the URL's hash; the
duplicate-content lookup goes through `document_keys` (migration 0027), whose key is the
hash. `pg_stat_user_indexes` showed no scan of either index in a bench.fetch run, and
they cost each fetched page two B-tree inserts of a 64-character key (the raw_content
row's, and the url_frontier row's at its completion, a non-HOT update): about 0.007 ms of
the backend's CPU and 365 bytes of WAL a page (bench/RESULTS.md, eleventh session,
helper s11-pg). A reader of its own that filters documents on `content_hash` now reads
the table (or makes the index again: the downgrade's statements).

On Citus url_frontier is distributed and raw_content a plain table on the coordinator
(migration 0018): DROP INDEX and CREATE INDEX go to the shards as they are.

Revision ID: 0051
Revises: 0050
Create Date: 2026-11-28
"""

from alembic import op

revision = "0051"
down_revision = "0050"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("DROP INDEX raw_content_content_hash_idx")
    op.execute("DROP INDEX url_frontier_content_hash_idx")


def downgrade() -> None:
    op.execute(
        "CREATE INDEX url_frontier_content_hash_idx ON url_frontier (content_hash)"
        " WHERE content_hash IS NOT NULL"
    )
    op.execute("CREATE INDEX raw_content_content_hash_idx ON raw_content (content_hash)")
