"""The copies of a document's text compressed with LZ4 where the server has it.

A document's text is stored three times (`raw_content.body`, its `paragraphs` and, with
headings or lists, its `markdown`: migration 0036), and `document_versions.body` keeps
the earlier ones. PostgreSQL compresses each value of more than about 2 KB, with pglz
unless a column says otherwise: on bench.fetch's pages that was a fifth of PostgreSQL's
CPU for the raw_content insert. LZ4 (PostgreSQL 14 and later, when built with it, as
Debian's and the official images are) compresses the same values for much less CPU and a
few more bytes (bench/RESULTS.md, "The fetch's cost a page"). A server built without LZ4
(the embedded wheel's) keeps pglz: it does not offer the method
(`default_toast_compression`'s values), and nothing changes there.

Only values written from now on are compressed with LZ4; those stored are read as they
are, and a reader gets the same values either way. On Citus both tables are plain tables
on the coordinator (migration 0018).

Revision ID: 0048
Revises: 0047
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0048"
down_revision = "0047"
branch_labels = None
depends_on = None

COLUMNS = {
    "raw_content": ("body", "paragraphs", "markdown"),
    "document_versions": ("body",),
}


def has_lz4() -> bool:
    """The server can compress with LZ4: it lists the method among the values of
    default_toast_compression (only a build with LZ4 does)."""
    found = op.get_bind().execute(
        sa.text(
            "SELECT 'lz4' = ANY (enumvals) FROM pg_settings "
            "WHERE name = 'default_toast_compression'"
        )
    )
    return bool(found.scalar())


def _set(method: str) -> None:
    for table, columns in COLUMNS.items():
        changes = ", ".join(f"ALTER COLUMN {c} SET COMPRESSION {method}" for c in columns)
        op.execute(f"ALTER TABLE {table} {changes}")


def upgrade() -> None:
    if has_lz4():
        _set("lz4")


def downgrade() -> None:
    _set("DEFAULT")
