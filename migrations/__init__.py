"""Alembic environment and revisions for the frontier schema; every revision is plain SQL
run through `op.execute`, and `frontier db upgrade` applies them."""
