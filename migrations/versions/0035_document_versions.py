"""Article versions (issue 30 item 4): a revisit or re-extraction whose text changed keeps
the version it replaces.

`document_versions`: one row per earlier version of a document (the newest version is the
document the sink holds): its number (1, 2, ... per URL; the current document is the next
one), the time it was fetched, its content hash, title and text (for the diff between
any two), and the pointer of its response in the WARC archive. FRONTIER_DOCUMENT_VERSIONS
bounds the rows kept per URL (the oldest go); SQL in frontier/sql/document_versions.sql.

On Citus it stays a plain table on the coordinator, like raw_content (migration 0018):
never joined with a distributed table.

Revision ID: 0035
Revises: 0034
Create Date: 2026-11-27
"""

from alembic import op

revision = "0035"
down_revision = "0034"
branch_labels = None
depends_on = None

UPGRADE = (
    """
    CREATE TABLE document_versions (
        url_hash       char(64) NOT NULL,
        version        integer NOT NULL,
        fetched_at     timestamptz NOT NULL,  -- when this version was fetched
        content_hash   text,
        title          text,
        body           text,
        warc_file      text,
        warc_offset    bigint,
        warc_length    bigint,
        warc_record_id text,
        kept_at        timestamptz NOT NULL DEFAULT now(),  -- when a newer one replaced it
        PRIMARY KEY (url_hash, version)
    )
    """,
    "GRANT SELECT, INSERT, DELETE ON document_versions TO frontier_fetcher",
    "GRANT SELECT ON document_versions TO frontier_api",
)


def upgrade() -> None:
    for statement in UPGRADE:  # one at a time, as Citus wants them (migration 0022)
        op.execute(statement)


def downgrade() -> None:
    op.execute("DROP TABLE document_versions")
