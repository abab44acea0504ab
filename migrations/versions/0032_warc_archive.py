"""The WARC archive (issue 30 items 1 and 2): where a document's response lies, and the
payloads archived, so that a duplicate is a `revisit` record pointing at the original.

`raw_content` gains the pointer of each document's response record: the complete WARC
file's name (relative to the archive directory), the offset and length of the record's
gzip member, and its `WARC-Record-ID`. NULL for a document stored with archiving off (or
before this revision). The Elasticsearch mapping gains the same four fields
(frontier/sinks/raw_content.json).

`warc_payloads`: one row per payload digest archived in a response record that became a
document (the first one wins): a later fetch with the same payload (a duplicate, an
unchanged revisit) is archived as a `revisit` (identical-payload-digest) that refers to it.
Rows of a file that retention deleted are deleted with it.

On Citus both stay plain tables on the coordinator, like raw_content (migration 0018):
never joined with a distributed table.

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-27
"""

from alembic import op

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None

UPGRADE = (
    """
    ALTER TABLE raw_content
        ADD COLUMN warc_file      text,
        ADD COLUMN warc_offset    bigint,
        ADD COLUMN warc_length    bigint,
        ADD COLUMN warc_record_id text
    """,
    """
    CREATE TABLE warc_payloads (
        payload_digest text PRIMARY KEY,  -- "sha1:BASE32" of the HTTP payload
        record_id      text NOT NULL,     -- the response record's WARC-Record-ID
        target_uri     text NOT NULL,
        warc_date      text NOT NULL,     -- its WARC-Date, as written
        warc_file      text NOT NULL,
        warc_offset    bigint NOT NULL,
        warc_length    bigint NOT NULL,
        created_at     timestamptz NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX warc_payloads_file_idx ON warc_payloads (warc_file)",
    "GRANT SELECT, INSERT, DELETE ON warc_payloads TO frontier_fetcher",
    "GRANT SELECT ON warc_payloads TO frontier_api",
)


def upgrade() -> None:
    for statement in UPGRADE:  # one at a time, as Citus wants them (migration 0022)
        op.execute(statement)


def downgrade() -> None:
    op.execute("DROP TABLE warc_payloads")
    op.execute(
        "ALTER TABLE raw_content DROP COLUMN warc_file, DROP COLUMN warc_offset, "
        "DROP COLUMN warc_length, DROP COLUMN warc_record_id"
    )
