"""Least privilege: one NOLOGIN group role per service, granted exactly what that service's
SQL needs; none of them owns anything or may create, alter or drop schema objects.

    frontier_fetcher  claim, renew, reap, complete (and submit redirect targets), robots.txt
                      and host leases, the PostgreSQL content sink, fetch_log pruning and
                      counter compaction
    frontier_poller   submit; its feed_state; seed default sources (seeded_sources, INSERT
                      on sources); the source columns a poll may change (feed URL moved,
                      feed gone, a spec's options) -- never DELETE
    frontier_spider   submit; spider_state and spider_pages
    frontier_api      read everything it shows; manage sources (INSERT, UPDATE, DELETE);
                      submit, because `POST /api/v1/import` imports URLs; feed_state,
                      because `POST /api/v1/sources/{id}/fire` runs a poll in the API process;
                      fold the /metrics event deltas

"Submit" (queue.sql `submit`) is INSERT on url_frontier and host_state, limited to the
columns a submit writes, and UPDATE of only the columns an upsert raises: a submitter can
add URLs but cannot claim, complete or kill them. Every writer of url_frontier or fetch_log
also needs INSERT on frontier_counts and event_counts: the statement triggers of 0001 and
0004 run with the invoker's privileges. Every role may read alembic_version (the schema
check at start-up). LISTEN/NOTIFY, advisory locks and identity columns need no grant;
ON DELETE CASCADE / SET NULL run as the owner of the referencing table.

Operators create LOGIN users IN ROLE these groups (docs/operations.md, "Database roles").
Roles are cluster-wide, so several databases on one server share them: creation is
IF NOT EXISTS (and tolerates a concurrent migration of another database creating them), and
the grants are made per database. Migrations run as the schema owner.

If a role is missing and the migrating user may not create roles (no CREATEROLE), the
migration fails, naming the statements an administrator must run first; it rolls back
whole, so the database stays at 0005 and `frontier db upgrade` can simply be run again.
(Skipping with a warning would leave a database at this revision without its roles, and
nothing would ever apply the grants later.)

When PUBLIC may create objects in the schema (PostgreSQL before 15), that is revoked if the
migrating user owns the schema -- otherwise every role could alter the schema through
PUBLIC -- and a warning is raised when it does not. The downgrade does not give it back.

Tables added by later migrations must be granted to these roles in that migration.

On a database with the `citus` extension, the roles must exist on every worker too: the
grants on the schema and on the distributed tables are run there. A role this migration
creates is sent on by Citus; one that already existed on the coordinator (made by another
database's migration while it was a plain server, or by an administrator) is not, so each
is created first on the workers where it is missing (`run_command_on_workers`, which
commits on each worker at once: a failed upgrade leaves them there, unused).

The downgrade revokes every privilege of the four roles in this database and drops each
role that no other database still uses and that has no members (dropping a group role
would silently remove its login users from it).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from alembic import op
from sqlalchemy import text

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

ROLES = ("frontier_fetcher", "frontier_poller", "frontier_spider", "frontier_api")

# The columns queue.sql `submit` inserts into url_frontier and host_state.
_FRONTIER_SUBMIT_COLUMNS = (
    "url_hash, url, host, source_id, origin, parent_url, depth, priority, discovery_meta, "
    "next_fetch_at, discovered_at, created_at, updated_at"
)
_HOST_SUMMARY_COLUMNS = "pending_count, pending_priority, pending_due_at"

SUBMIT = f"""
GRANT SELECT ON alembic_version, sources, url_frontier, host_state TO {{role}};
GRANT INSERT ({_FRONTIER_SUBMIT_COLUMNS}), UPDATE (priority, updated_at)
    ON url_frontier TO {{role}};
GRANT INSERT (host, min_delay_ms, {_HOST_SUMMARY_COLUMNS}), UPDATE ({_HOST_SUMMARY_COLUMNS})
    ON host_state TO {{role}};
GRANT INSERT ON fetch_log, frontier_counts, event_counts TO {{role}};
"""

FETCHER = """
-- claim, complete, renew, reap, release; robots.txt, host leases, request slots, backoff.
GRANT UPDATE ON url_frontier, host_state TO {role};
-- The PostgreSQL sink's upsert.
GRANT SELECT, INSERT, UPDATE ON raw_content TO {role};
-- Maintenance: fetch_log pruning and frontier_counts compaction.
GRANT SELECT, DELETE ON fetch_log, frontier_counts TO {role};
"""

POLLER = """
-- Seeding the default sources (and their feed_state rows); what a poll changes of a source.
GRANT INSERT ON sources TO {role};
GRANT UPDATE (feed_url, enabled, url_filters, min_published_at, selectors, fetchprotection,
              keep_trailing_slash, updated_at) ON sources TO {role};
GRANT SELECT, INSERT, UPDATE ON feed_state TO {role};
GRANT SELECT, INSERT ON seeded_sources TO {role};
"""

SPIDER = """
GRANT SELECT, INSERT, UPDATE ON spider_state, spider_pages TO {role};
"""

# The API submits too: `POST /api/v1/import` imports URLs (and a manual fire submits).
API = """
-- Sources CRUD (a source's feed_state row comes with it); manual fires poll in-process.
GRANT INSERT, UPDATE, DELETE ON sources TO {role};
GRANT SELECT, INSERT, UPDATE ON feed_state TO {role};
-- Stats, dashboard, fetch log; /metrics folds old event deltas.
GRANT SELECT ON fetch_log, frontier_counts TO {role};
GRANT SELECT, DELETE ON event_counts TO {role};
"""

GRANTS = {
    "frontier_fetcher": SUBMIT + FETCHER,
    "frontier_poller": SUBMIT + POLLER,
    "frontier_spider": SUBMIT + SPIDER,
    "frontier_api": SUBMIT + API,
}

_ROLE_ARRAY = "ARRAY[" + ", ".join(f"'{role}'" for role in ROLES) + "]"

CREATE_ROLES = f"""
DO $$
DECLARE
    role text;
    missing text[] := '{{}}';
BEGIN
    FOREACH role IN ARRAY {_ROLE_ARRAY} LOOP
        CONTINUE WHEN to_regrole(role) IS NOT NULL;
        BEGIN
            EXECUTE format('CREATE ROLE %I NOLOGIN', role);
        EXCEPTION
            -- Another database's migration created it since we looked.
            WHEN duplicate_object OR unique_violation THEN NULL;
            WHEN insufficient_privilege THEN missing := missing || role;
        END;
    END LOOP;
    IF missing <> '{{}}' THEN
        RAISE EXCEPTION 'cannot create the database roles % (% has no CREATEROLE): have an '
            'administrator run % and then run `frontier db upgrade` again '
            '(docs/operations.md, "Database roles")',
            array_to_string(missing, ', '), current_user,
            (SELECT string_agg(format('CREATE ROLE %I NOLOGIN;', r), ' ') FROM unnest(missing) r)
            USING ERRCODE = 'insufficient_privilege';
    END IF;
END $$;
"""

REVOKE_PUBLIC_CREATE = """
DO $$
DECLARE
    schema_owner oid := (SELECT nspowner FROM pg_namespace WHERE nspname = current_schema());
BEGIN
    IF has_schema_privilege('public', current_schema(), 'CREATE') THEN
        IF pg_has_role(schema_owner, 'USAGE') THEN
            EXECUTE format('REVOKE CREATE ON SCHEMA %I FROM PUBLIC', current_schema());
        ELSE
            RAISE WARNING 'PUBLIC may create objects in schema %, so the frontier roles can '
                'too: have its owner run REVOKE CREATE ON SCHEMA % FROM PUBLIC',
                current_schema(), current_schema();
        END IF;
    END IF;
END $$;
"""


def _grant_block(role: str) -> str:
    return f"""
DO $$
BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO {role}', current_schema());
{GRANTS[role].format(role=role)}
END $$;
"""


# Citus only, before CREATE_ROLES: each role the coordinator already has, created on every
# worker that lacks it. (Not those CREATE_ROLES makes: Citus sends those on in this
# transaction, and a worker's own CREATE ROLE would wait for it to commit.)
ROLES_ON_WORKERS = f"""
DO $$
DECLARE
    role text;
    failed text;
BEGIN
    FOREACH role IN ARRAY {_ROLE_ARRAY} LOOP
        CONTINUE WHEN to_regrole(role) IS NULL;
        -- Not sent on by the worker (with Citus's metadata it would send it to every
        -- node, the coordinator included, which waits for this statement).
        SELECT string_agg(format('%s:%s: %s', nodename, nodeport, result), '; ') INTO failed
        FROM run_command_on_workers(format(
            'DO $do$ BEGIN IF to_regrole(%L) IS NULL THEN '
            'SET LOCAL citus.enable_create_role_propagation = off; '
            'CREATE ROLE %I NOLOGIN; END IF; END $do$',
            role, role))
        WHERE NOT success;
        IF failed IS NOT NULL THEN
            RAISE EXCEPTION 'cannot create the role % on the Citus workers: %', role, failed;
        END IF;
    END LOOP;
END $$;
"""

GRANT_ALL = REVOKE_PUBLIC_CREATE + "".join(_grant_block(role) for role in ROLES)

DOWNGRADE = f"""
DO $$
DECLARE
    role text;
BEGIN
    FOREACH role IN ARRAY {_ROLE_ARRAY} LOOP
        CONTINUE WHEN to_regrole(role) IS NULL;
        EXECUTE format('REVOKE ALL ON ALL TABLES IN SCHEMA %I FROM %I', current_schema(), role);
        EXECUTE format('REVOKE ALL ON ALL SEQUENCES IN SCHEMA %I FROM %I',
                       current_schema(), role);
        EXECUTE format('REVOKE ALL ON SCHEMA %I FROM %I', current_schema(), role);
        IF EXISTS (SELECT FROM pg_auth_members WHERE roleid = to_regrole(role)) THEN
            RAISE NOTICE 'role % kept: it still has members', role;
            CONTINUE;
        END IF;
        BEGIN
            EXECUTE format('DROP ROLE %I', role);
        EXCEPTION
            -- Still granted in another database, or we may not drop roles.
            WHEN dependent_objects_still_exist OR insufficient_privilege THEN
                RAISE NOTICE 'role % kept: %', role, SQLERRM;
        END;
    END LOOP;
END $$;
"""


def has_citus() -> bool:
    found = op.get_bind().execute(
        text("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
    )
    return bool(found.scalar())


def upgrade() -> None:
    if has_citus():
        op.execute(ROLES_ON_WORKERS)
    op.execute(CREATE_ROLES + GRANT_ALL)


def downgrade() -> None:
    op.execute(DOWNGRADE)
