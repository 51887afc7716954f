#!/usr/bin/env bash
# Helpers to run a throwaway PostgreSQL 15 cluster for tests and the demo.
# Source it, then: pg_start; ...; pg_stop.  PostgreSQL refuses to run as
# root, so as root the server runs as the "postgres" user.
PG_BIN=${PG_BIN:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}
[ -x "$PG_BIN/initdb" ] || PG_BIN=/usr/lib/postgresql/15/bin

as_pg_user() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Start a cluster in a fresh directory; sets PGHOST, PGPORT, PGUSER, PGDATABASE.
# PG_EXTRA_OPTS adds server settings ("-c name=value ..."), e.g. a preloaded
# library for test/integration/pg_cron_test.sh.
pg_start() {
    PG_DIR=$(mktemp -d /tmp/svclust_pg.XXXXXX)
    chmod 755 "$PG_DIR"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$PG_DIR"
    export PGPORT=${PGPORT:-$((54000 + RANDOM % 1000))}
    export PGHOST=$PG_DIR
    export PGUSER=$(if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi)
    export PGDATABASE=postgres
    as_pg_user "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U "$PGUSER" >"$PG_DIR/initdb.log" 2>&1 ||
        { cat "$PG_DIR/initdb.log"; return 1; }
    as_pg_user "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
        -o "-p $PGPORT -k $PG_DIR -c listen_addresses='' -c max_parallel_workers_per_gather=2 ${PG_EXTRA_OPTS:-}" \
        start >/dev/null || { cat "$PG_DIR/server.log"; return 1; }
}

pg_stop() {
    if [ -n "${PG_DIR:-}" ] && [ -d "$PG_DIR/data" ]; then
        as_pg_user "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
        rm -rf "$PG_DIR"
    fi
}
