"""Dashboard sessions kept on the server, so that logging out ends one (issue 35, low).

A session cookie was only signed (frontier/api/sessions.py): logging out deleted it from
the browser, but the same value, replayed, still acted until it expired. Now each login
writes a row of `api_sessions`, keyed by the cookie's nonce, and a cookie is honoured only
while its row exists and has not expired: every request with a cookie looks its row up by
primary key, and logging out deletes it, in every API process at once. The signature is
still checked first (a nonce alone does not make a cookie: the HMAC needs the token).
Expired rows are pruned by the next login. The sessions of the old, signed-only cookies
end with this revision: their users log in again.

On Citus the table stays a plain table on the coordinator, like raw_content: only the API
reads and writes it, one row by its key, never joined with a distributed table.

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-28
"""

from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None

UPGRADE = (
    """
    CREATE TABLE api_sessions (
        id         text PRIMARY KEY,  -- the session cookie's nonce
        role       text NOT NULL CHECK (role IN ('read', 'write')),
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX api_sessions_expires_idx ON api_sessions (expires_at)",
    "GRANT SELECT, INSERT, DELETE ON api_sessions TO frontier_api",
)


def upgrade() -> None:
    for statement in UPGRADE:  # one at a time, as Citus wants them (migration 0022)
        op.execute(statement)


def downgrade() -> None:
    op.execute("DROP TABLE api_sessions")
