"""A verdict before anything is stored: is this the article? (issue 29, item 1).

Pages that are not the article end with their own reason and no document:

- `url_frontier.dead_reason` gains `noindex` (an `X-Robots-Tag` or `<meta name="robots">`
  that says so: final, as Google drops such a page), `soft_404` (a 200 that says "not
  found", twice) and `login_required` (an article that redirects to a login or
  subscription page, twice). A challenge and an empty page never end `dead`: they are
  retried, and past the limit they end `failed` for an operator (docs/fetching.md).
- `fetch_log.outcome` and `spider_state.last_outcome` gain `challenge`, `noindex`,
  `soft_404`, `login_required` and `empty`, so the log, `/metrics` and the dashboard count
  each apart.

Revision ID: 0034
Revises: 0033
Create Date: 2026-11-27
"""

from alembic import op

revision = "0034"
down_revision = "0033"
branch_labels = None
depends_on = None

REASONS = (
    "'not_found', 'gone', 'robots_blocked', 'redirect', 'max_retries', 'duplicate_content', "
    "'unsupported_content', 'blocked_by_policy', 'forbidden'"
)
NEW_REASONS = "'noindex', 'soft_404', 'login_required'"
OUTCOMES = (
    "'ok', 'ok_no_new', 'not_modified', 'failed', 'blocked', 'redirect', 'not_found', 'gone', "
    "'rate_limited', 'deferred', 'duplicate', 'unsupported', 'refused'"
)
NEW_OUTCOMES = "'challenge', 'noindex', 'soft_404', 'login_required', 'empty'"


def _checks(reasons: str, outcomes: str) -> tuple[str, ...]:
    """One statement each, as Citus wants them (migration 0022), and the reference table
    (spider_state) first: on Citus it cannot change after a parallel change to a
    distributed table (url_frontier) in the same transaction."""
    return (
        "ALTER TABLE spider_state DROP CONSTRAINT spider_state_last_outcome_check",
        f"""ALTER TABLE spider_state ADD CONSTRAINT spider_state_last_outcome_check
    CHECK (last_outcome IN ({outcomes}))""",
        "ALTER TABLE fetch_log DROP CONSTRAINT fetch_log_outcome_check",
        f"""ALTER TABLE fetch_log ADD CONSTRAINT fetch_log_outcome_check
    CHECK (outcome IN ({outcomes})) NOT VALID""",
        "ALTER TABLE fetch_log VALIDATE CONSTRAINT fetch_log_outcome_check",
        "ALTER TABLE url_frontier DROP CONSTRAINT url_frontier_dead_reason_check",
        f"""ALTER TABLE url_frontier ADD CONSTRAINT url_frontier_dead_reason_check
    CHECK (dead_reason IN ({reasons})) NOT VALID""",
        "ALTER TABLE url_frontier VALIDATE CONSTRAINT url_frontier_dead_reason_check",
    )


def upgrade() -> None:
    for statement in _checks(f"{REASONS}, {NEW_REASONS}", f"{OUTCOMES}, {NEW_OUTCOMES}"):
        op.execute(statement)


def downgrade() -> None:
    # The rows of the new values become the nearest old ones first.
    op.execute(
        f"UPDATE spider_state SET last_outcome = 'failed' WHERE last_outcome IN ({NEW_OUTCOMES})"
    )
    op.execute(f"DELETE FROM fetch_log WHERE outcome IN ({NEW_OUTCOMES})")
    op.execute(
        f"UPDATE url_frontier SET dead_reason = 'forbidden' WHERE dead_reason IN ({NEW_REASONS})"
    )
    for statement in _checks(REASONS, OUTCOMES):
        op.execute(statement)
