"""Host summaries in parts: `host_deltas.part`, so that folds of one bucket run at once.

A submit's host summary (migration 0025) is now one row per part of its hosts (a host's
part: its `hashtext` modulo `frontier.submit_rows.FOLD_PARTS`), and a fold names the parts it
takes. Folds of different parts write different hosts, so an import's fold at its end (a
long statement on one backend when the import spans many hosts: bench.submit,
bench/RESULTS.md) runs as one statement per part at
once, on as many cores as the server has. Every other fold takes every part in one
statement, as before. Rows written before this revision are part 0.

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-26
"""

from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


UPGRADE = (
    "ALTER TABLE host_deltas ADD COLUMN part smallint NOT NULL DEFAULT 0",
    # apart: Citus refuses a column added with a constraint
    "ALTER TABLE host_deltas ADD CONSTRAINT host_deltas_part_check CHECK (part >= 0)",
)


def upgrade() -> None:
    for statement in UPGRADE:  # one at a time, as Citus wants them (migration 0022)
        op.execute(statement)


def downgrade() -> None:
    op.execute("ALTER TABLE host_deltas DROP COLUMN part")
