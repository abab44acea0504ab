"""`url_frontier.fetch_url`: the spelling to request, apart from the identity.

`url`/`url_hash` stay the normalised identity (the dedup key). `fetch_url` is the URL as it
was discovered, minus the fragment, or the server's own spelling once a fetch followed a
redirect to the same identity (docs/fetching.md "Identity and request spelling"). NULL
means "the same as `url`": the claim reads `coalesce(fetch_url, url)`.

What filling it would cost: `ADD COLUMN` without a default is a catalogue change (no table
rewrite, a brief ACCESS EXCLUSIVE lock). A backfill (`UPDATE url_frontier SET fetch_url =
url`) rewrites every row: at 10^8 rows that is the whole table written again (tens of GB of
heap and WAL, plus as many dead tuples for vacuum, and the `url` text stored twice), for no
information, since every existing row was discovered under its normalised spelling as far
as the frontier knows. So the existing rows are "filled" by the NULL meaning: they request
`url`, exactly as before, and they learn the server's spelling on their next fetch. Only
rows whose discovered spelling differs from `url` ever store a value.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23
"""

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


# Every role that submits (0006's SUBMIT grants) inserts the spelling with the row.
SUBMITTERS = "frontier_fetcher, frontier_poller, frontier_spider, frontier_api"


def upgrade() -> None:
    op.execute("ALTER TABLE url_frontier ADD COLUMN fetch_url text")
    op.execute(
        "COMMENT ON COLUMN url_frontier.fetch_url IS "
        "'the spelling to request; NULL: the same as url'"
    )
    op.execute(f"GRANT INSERT (fetch_url) ON url_frontier TO {SUBMITTERS}")


def downgrade() -> None:
    op.execute("ALTER TABLE url_frontier DROP COLUMN fetch_url")
