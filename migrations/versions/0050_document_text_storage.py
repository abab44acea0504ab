"""What storing a document's text costs PostgreSQL besides its compression: the search
vector's failed compression, and the text columns' statistics.

- `raw_content_search.search` (migration 0024, a `tsvector`: each distinct word of the
  title and body once, then its positions) is stored `EXTERNAL`: out of line, without
  compression. Over about 2 KB (a text of some 3,000 characters and more) PostgreSQL
  tried pglz on the vector before moving it out of line, and gave up: a vector repeats too
  little to come out a quarter smaller. Every one of bench.fetch's large documents (a 6 KB
  vector each) was stored uncompressed after it, the attempt 0.03-0.04 ms of the backend's
  CPU a document (bench/RESULTS.md, tenth session); now it goes where it went anyway
  without the attempt, and a reader (the search's statements) gets the same value.
- `raw_content.body`, `paragraphs` and `markdown` keep no statistics
  (`SET STATISTICS 0`): no statement filters, joins or sorts on a document's text (the
  search reads the stored vectors, whose statistics stay), and ANALYZE decompressed every
  sampled row's paragraphs to count their most common elements: 40 of the 50 ms of an
  ANALYZE of 1,000 large documents; with 30,000 rows sampled, about 1.2 s each time
  autovacuum analyses the table.

Nothing a reader gets changes; vectors stored before are read as they are. Both tables are
plain tables on the coordinator on Citus (migrations 0018 and 0024).

Revision ID: 0050
Revises: 0049
Create Date: 2026-11-28
"""

from alembic import op

revision = "0050"
down_revision = "0049"
branch_labels = None
depends_on = None

TEXT_COLUMNS = ("body", "paragraphs", "markdown")


def _statistics(target: int) -> None:
    changes = ", ".join(f"ALTER COLUMN {c} SET STATISTICS {target}" for c in TEXT_COLUMNS)
    op.execute(f"ALTER TABLE raw_content {changes}")


def upgrade() -> None:
    op.execute("ALTER TABLE raw_content_search ALTER COLUMN search SET STORAGE EXTERNAL")
    _statistics(0)


def downgrade() -> None:
    _statistics(-1)  # the server's default_statistics_target again
    # tsvector's own storage (pg_type.typstorage): compressed, then out of line
    op.execute("ALTER TABLE raw_content_search ALTER COLUMN search SET STORAGE EXTENDED")
