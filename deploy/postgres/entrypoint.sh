#!/bin/sh
# The official image's contract, in short: on an empty $PGDATA, initdb with POSTGRES_USER
# (scram-sha-256 for every host), create POSTGRES_DB, run /docker-entrypoint-initdb.d/*.sh
# and *.sql against a server listening only on its socket; then exec the command.
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
export POSTGRES_USER POSTGRES_DB
if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust \
        --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 -D "$PGDATA" >/dev/null
    rm -f "$pwfile"
    printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -k /var/run/postgresql" -w start >/dev/null
    export PGHOST=/var/run/postgresql
    if [ "$POSTGRES_DB" != postgres ]; then
        echo 'CREATE DATABASE :"db"' | psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" \
            --dbname postgres --set db="$POSTGRES_DB" >/dev/null
    fi
    for script in /docker-entrypoint-initdb.d/*; do
        case "$script" in
            *.sh) echo "initdb: running $script"; sh "$script" ;;
            *.sql) echo "initdb: running $script"
                   psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -f "$script" ;;
        esac
    done
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
    unset PGHOST
    echo "initdb: $(cat /opt/pg-source), data directory ready"
fi
if [ "${1:-}" = postgres ]; then
    shift
    exec postgres -D "$PGDATA" -c listen_addresses='*' -k /var/run/postgresql "$@"
fi
exec "$@"
