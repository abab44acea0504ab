"""Full-text search over stored vectors: `raw_content_search (url_hash, search)`.

Migration 0019 indexed an expression, `to_tsvector(title || body)`, with GIN. Every
ANALYZE of `raw_content` then computed that expression again for each row of its sample
(up to 30,000 rows, each parsed again), to keep the statistics the search's
plan choice reads (`search_estimate`). Autovacuum analyses the table each time a tenth of
it is new, so while the table grows this cost PostgreSQL more than the inserts themselves:
on `bench.fetch`'s small pages, PostgreSQL spent far more CPU per page with the
expression index than with the same statistics kept from stored vectors (bench/RESULTS.md,
"Extraction at the speed of the fetch").

The vector is computed once, when the sink writes the document (one statement writes both
tables), and kept in a table of its own, so `raw_content` keeps the document's fields and
nothing else (docs/architecture.md, "The data model contract": the same shape as the
Elasticsearch index). Its rows go with their document (`ON DELETE CASCADE`). ANALYZE reads
the stored vectors: the same statistics, no parsing. Reads that check a vector row by row
(a phrase, or the walk of the newest documents for a common word) read it instead of
parsing the text again.

Upgrading computes the vector of every stored document once (as building the index did).

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-24
"""

from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None

# The text searched: title and body, cut at 100,000 characters (a tsvector over 1 MB makes
# the INSERT fail). frontier/sql/raw_content.sql computes the same in `upsert_many`.
SEARCH_DOCUMENT = (
    "to_tsvector('simple'::regconfig, "
    "left(coalesce(title, '') || ' ' || coalesce(body, ''), 100000))"
)

UPGRADE = (
    """
    CREATE TABLE raw_content_search (
        url_hash char(64) PRIMARY KEY REFERENCES raw_content (url_hash) ON DELETE CASCADE,
        search tsvector NOT NULL
    )
    """,
    f"INSERT INTO raw_content_search (url_hash, search) "
    f"SELECT url_hash, {SEARCH_DOCUMENT} FROM raw_content",
    "DROP INDEX raw_content_search_idx",
    "CREATE INDEX raw_content_search_idx ON raw_content_search USING gin (search)",
    # as raw_content (migrations 0006 and 0019): the fetcher's sink writes, the API reads
    "GRANT SELECT, INSERT, UPDATE ON raw_content_search TO frontier_fetcher",
    "GRANT SELECT ON raw_content_search TO frontier_api",
)

DOWNGRADE = (
    f"CREATE INDEX raw_content_search_expr_idx ON raw_content USING gin (({SEARCH_DOCUMENT}))",
    "DROP TABLE raw_content_search",
    "ALTER INDEX raw_content_search_expr_idx RENAME TO raw_content_search_idx",
)


def upgrade() -> None:
    for statement in UPGRADE:  # one at a time, as Citus wants them (migration 0022)
        op.execute(statement)


def downgrade() -> None:
    for statement in DOWNGRADE:
        op.execute(statement)
