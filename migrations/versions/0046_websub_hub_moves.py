"""A feed that moves to another hub: its old subscription is unsubscribed from the old hub
while the new one is asked, so a source can have two rows for a while. `source_id` is
unique only among the subscriptions not being unsubscribed (a partial unique index instead
of the column's UNIQUE constraint); the rows in 'unsubscribing' keep their hub, topic and
secret until the old hub verifies the unsubscription (or refuses it), and are then
deleted. Before, the row was moved to the new hub in place, and the old hub went on
pushing until its lease ran out.

On Citus the table is a plain one on the coordinator (migration 0045).

Revision ID: 0046
Revises: 0045
Create Date: 2026-11-28
"""

from alembic import op

revision = "0046"
down_revision = "0045"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "CREATE UNIQUE INDEX websub_subscriptions_source ON websub_subscriptions (source_id) "
        "WHERE state <> 'unsubscribing'"
    )
    op.execute(
        "ALTER TABLE websub_subscriptions DROP CONSTRAINT websub_subscriptions_source_id_key"
    )


def downgrade() -> None:
    # one row a source again: an unsubscription still under way is left to its hub's lease
    op.execute("DELETE FROM websub_subscriptions WHERE state = 'unsubscribing'")
    op.execute("DROP INDEX websub_subscriptions_source")
    op.execute(
        "ALTER TABLE websub_subscriptions ADD CONSTRAINT websub_subscriptions_source_id_key "
        "UNIQUE (source_id)"
    )
