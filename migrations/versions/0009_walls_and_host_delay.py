"""Bot walls and a host delay that follows its sources (issue 14, items 3, 4 and 8).

- `url_frontier.dead_reason` gains `forbidden`: 401, 403 and 451 end a URL after at most
  two attempts instead of being retried like a server error.
- `host_state.source_delay_ms`: the largest current `rate_limit_ms` of the sources whose
  URLs the host holds (null: none of them sets one, and `min_delay_ms`, the default when
  the host was first seen, applies). Kept by the submit and by a change of a source's
  rate limit (frontier/sql/sources.sql).
- `host_state.slowdown` / `good_answers`: how many times the delay is doubled after
  429/503 answers, and the good answers counted towards taking one doubling off
  (frontier/host_delay.py has the rule).
- `host_state.delay_ms`: the host's delay, generated from the above (the same rule as
  frontier.host_delay.host_delay_ms), so the claim reads one column as before.
- Submitters may set `source_delay_ms` (queue.sql `submit`); the API may update it when a
  source's rate limit changes.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

SUBMITTERS = ("frontier_fetcher", "frontier_poller", "frontier_spider", "frontier_api")

REASONS = (
    "'not_found', 'gone', 'robots_blocked', 'redirect', 'max_retries', 'duplicate_content', "
    "'unsupported_content', 'blocked_by_policy'"
)

UPGRADE = f"""
ALTER TABLE url_frontier DROP CONSTRAINT url_frontier_dead_reason_check;
ALTER TABLE url_frontier ADD CONSTRAINT url_frontier_dead_reason_check
    CHECK (dead_reason IN ({REASONS}, 'forbidden'));

ALTER TABLE host_state
    ADD COLUMN source_delay_ms integer CHECK (source_delay_ms >= 0),
    ADD COLUMN slowdown smallint NOT NULL DEFAULT 0 CHECK (slowdown BETWEEN 0 AND 7),
    ADD COLUMN good_answers integer NOT NULL DEFAULT 0 CHECK (good_answers >= 0);
-- Doubled delays of the old scheme (429s doubled min_delay_ms or crawl_delay_ms in place)
-- stay as they are; from now on doubling is `slowdown`.
ALTER TABLE host_state ADD COLUMN delay_ms integer GENERATED ALWAYS AS (
    CASE WHEN slowdown = 0
         THEN greatest(coalesce(crawl_delay_ms, 0), coalesce(source_delay_ms, min_delay_ms))
         ELSE greatest(
             greatest(coalesce(crawl_delay_ms, 0), coalesce(source_delay_ms, min_delay_ms)),
             least(60000::bigint, greatest(
                 greatest(coalesce(crawl_delay_ms, 0),
                          coalesce(source_delay_ms, min_delay_ms))::bigint << slowdown::int,
                 500::bigint << (slowdown - 1)::int))::integer)
    END) STORED;
"""

DOWNGRADE = f"""
ALTER TABLE host_state
    DROP COLUMN IF EXISTS delay_ms,
    DROP COLUMN IF EXISTS source_delay_ms,
    DROP COLUMN IF EXISTS slowdown,
    DROP COLUMN IF EXISTS good_answers;
UPDATE url_frontier SET dead_reason = 'max_retries' WHERE dead_reason = 'forbidden';
ALTER TABLE url_frontier DROP CONSTRAINT url_frontier_dead_reason_check;
ALTER TABLE url_frontier ADD CONSTRAINT url_frontier_dead_reason_check
    CHECK (dead_reason IN ({REASONS}));
"""


def upgrade() -> None:
    op.execute(UPGRADE)
    for role in SUBMITTERS:
        op.execute(
            f"GRANT INSERT (source_delay_ms), UPDATE (source_delay_ms) ON host_state TO {role}"
        )


def downgrade() -> None:
    for role in SUBMITTERS:
        op.execute(
            f"REVOKE INSERT (source_delay_ms), UPDATE (source_delay_ms) ON host_state FROM {role}"
        )
    op.execute(DOWNGRADE)
