#!/bin/sh
# Runs once, when PostgreSQL initialises an empty data directory (the official image and
# deploy/postgres/Dockerfile both run /docker-entrypoint-initdb.d/*.sh), as the owner
# POSTGRES_USER. It creates the four NOLOGIN group roles of migration 0006 (which then
# uses them as they are and grants them their tables) and one LOGIN user per service in
# its group, each with its own password; a service whose password is unset gets no user.
# For an existing database, run the same statements by hand (docs/operations.md,
# "Database roles").
set -eu

login_user() {  # group user password-variable
    password=$(printenv "$3" || true)
    if [ -z "$password" ]; then
        echo "frontier roles: $3 is unset, no login user $2" >&2
        return
    fi
    psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "${POSTGRES_DB:-$POSTGRES_USER}" \
        --set group="$1" --set login="$2" --set password="$password" <<'SQL'
CREATE ROLE :"login" LOGIN PASSWORD :'password' IN ROLE :"group";
SQL
    echo "frontier roles: login user $2 in $1"
}

for group in frontier_fetcher frontier_poller frontier_spider frontier_api; do
    psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "${POSTGRES_DB:-$POSTGRES_USER}" \
        --set group="$group" <<'SQL'
SELECT format('CREATE ROLE %I NOLOGIN', :'group')
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'group') \gexec
SQL
done
login_user frontier_fetcher "${POSTGRES_FETCHER_USER:-fetcher_1}" POSTGRES_FETCHER_PASSWORD
login_user frontier_poller "${POSTGRES_POLLER_USER:-poller_1}" POSTGRES_POLLER_PASSWORD
login_user frontier_spider "${POSTGRES_SPIDER_USER:-spider_1}" POSTGRES_SPIDER_PASSWORD
login_user frontier_api "${POSTGRES_API_USER:-api_1}" POSTGRES_API_PASSWORD
