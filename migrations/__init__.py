"""Alembic environment and revisions for the frontier schema; every revision is plain SQL
run through `op.execute`, and `frontier db upgrade` applies them."""

# The newest revision, for the schema check every command makes as it starts
# (frontier.migrate, without loading Alembic). A new revision moves it: tests/unit check
# that it is Alembic's head.
HEAD = "0051"
