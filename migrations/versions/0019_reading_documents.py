"""Reading what was stored and one URL's story (issue 16 items 1-2).

- `raw_content` is read newest first, keyset-paged by `(fetched_at, url_hash)`, whole or
  by source or host: one b-tree per order (the old `(fetched_at)` index is covered by the
  first and dropped).
- `--search` is PostgreSQL full-text search over title and body: a GIN index on a
  `tsvector` expression with the `simple` configuration (no stemming, no stop words: the
  corpus mixes languages, and one dictionary would stem all of them wrongly). The indexed
  text is cut at 100,000 characters, because a tsvector over 1 MB makes the INSERT fail,
  which would turn a long page into a sink error. The expression is written out again in
  frontier/sql/raw_content.sql (`SEARCH_DOCUMENT`): it must stay the same so the planner
  uses this index. An expression index costs no table rewrite (a stored generated column
  would rewrite the table); bench/api_reads.py measures its write cost.
- `fetch_log (url)`: every fetch-log row of one URL, for `frontier url show`. A hash index:
  equality is all it serves, and a b-tree refuses keys over ~2.7 kB, so a long URL would
  make the fetch log's INSERT fail.
- The API role reads `raw_content` (`GET /api/v1/documents`).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-24
"""

from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

SEARCH_DOCUMENT = (
    "to_tsvector('simple'::regconfig, "
    "left(coalesce(title, '') || ' ' || coalesce(body, ''), 100000))"
)

UPGRADE = f"""
CREATE INDEX raw_content_recent_idx ON raw_content (fetched_at, url_hash);
CREATE INDEX raw_content_source_recent_idx ON raw_content (source_id, fetched_at, url_hash);
CREATE INDEX raw_content_host_recent_idx ON raw_content (host, fetched_at, url_hash);
CREATE INDEX raw_content_search_idx ON raw_content USING gin (({SEARCH_DOCUMENT}));
DROP INDEX raw_content_fetched_at_idx;
CREATE INDEX fetch_log_url_idx ON fetch_log USING hash (url);
GRANT SELECT ON raw_content TO frontier_api;
"""

DOWNGRADE = """
REVOKE SELECT ON raw_content FROM frontier_api;
DROP INDEX fetch_log_url_idx;
CREATE INDEX raw_content_fetched_at_idx ON raw_content (fetched_at);
DROP INDEX raw_content_search_idx;
DROP INDEX raw_content_host_recent_idx;
DROP INDEX raw_content_source_recent_idx;
DROP INDEX raw_content_recent_idx;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
