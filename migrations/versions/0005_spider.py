"""Spider state: per-source discovery-spider schedule, options and run summaries, the
listing pages it has seen (validators and links, for incremental runs), and the built-in
`discovered` source that receives external links when a source allows it.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

UPGRADE = """
-- One row per source the spider has scheduled or run (created on first use).
CREATE TABLE spider_state (
    source_id          uuid PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
    -- How often `frontier spider --due` runs this source.
    interval_minutes   integer NOT NULL DEFAULT 1440
                       CHECK (interval_minutes BETWEEN 1 AND 525600),
    -- Queue links to unknown hosts under the `discovered` source (else only count them).
    allow_external     boolean NOT NULL DEFAULT false,
    -- Listing pages to start from besides the source's base_url.
    listing_urls       text[] NOT NULL DEFAULT '{}',
    spider_next_run_at timestamptz NOT NULL DEFAULT '-infinity',
    last_run_at        timestamptz,
    last_outcome       text CHECK (last_outcome IN ('ok', 'ok_no_new', 'not_modified', 'failed',
                           'blocked', 'redirect', 'not_found', 'gone', 'rate_limited', 'deferred',
                           'duplicate', 'unsupported', 'refused')),  -- frontier.states.LogOutcome
    last_summary       jsonb CHECK (last_summary IS NULL OR jsonb_typeof(last_summary) = 'object'),
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX spider_state_next_run_idx ON spider_state (spider_next_run_at);

-- Listing and navigation pages the spider has fetched, per source: validators for a
-- conditional GET, a hash of the links found, and the listing pages linked from it.
CREATE TABLE spider_pages (
    source_id     uuid NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    url           text NOT NULL,
    etag          text,
    last_modified text,
    links_hash    char(64),
    children      text[] NOT NULL DEFAULT '{}',
    checked_at    timestamptz NOT NULL,
    changed_at    timestamptz NOT NULL,
    PRIMARY KEY (source_id, url)
);

-- External links go here when a source allows it; lowest priority.
INSERT INTO sources (name, ingestion_mode, priority)
VALUES ('discovered', 'feed', 1)
ON CONFLICT (name) DO NOTHING;
"""

DOWNGRADE = """
DROP TABLE spider_pages;
DROP TABLE spider_state;
DELETE FROM sources WHERE name = 'discovered';
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
