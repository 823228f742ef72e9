#!/usr/bin/env bash
# bench/pg-statements.sh: what PostgreSQL spends on each statement navd sends while navigating
# (BENCHMARKS.md, "Navigation analytics"): a throwaway cluster with pg_stat_statements (as
# bench/postgres.sh starts one, bench/lib.sh), one navd on it, SESSIONS fresh sessions, then
# DURATION of bench/navigate.lua at CONNECTIONS connections; prints navigations/s and, for the
# statements that took the most time, their calls, µs and WAL bytes per call, and buffers
# touched per call.
#
#   [PRE='<SQL run once the sessions exist>'] NAVD_FLAGS=... bench/pg-statements.sh
#
# PRE changes the database under navd before the timed run, e.g. PRE='DROP INDEX feed_time' to
# see what one index costs a change. Compare runs with NAVD_FLAGS="--feed-retention 0" (no feed).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
cd "$ROOT"
DURATION=${DURATION:-8s}
CONNECTIONS=${CONNECTIONS:-32}
SESSIONS=${SESSIONS:-200}
PRE=${PRE:-}
# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
bench_init pg-statements
ensure_wrk
private_navd

PG_OPTIONS="-c shared_preload_libraries=pg_stat_statements" postgres_start pg-statements
psql_run -c "CREATE DATABASE navd"
psql_run -d navd -c "CREATE EXTENSION pg_stat_statements"

port=$(free_port)
url="http://127.0.0.1:$port"
# shellcheck disable=SC2086
start_server "$TMP/navd.log" "$url/healthz" "$NAVD" serve --graph "$GRAPH" \
    --store "postgres://postgres@127.0.0.1:$PG_PORT/navd" --listen "127.0.0.1:$port" $NAVD_FLAGS
python3 "$BENCH/sessions.py" --url "$url" --count "$SESSIONS" --procs 2 --out "$TMP/sessions.txt" 2>/dev/null
[[ -n $PRE ]] && psql_run -d navd -c "$PRE"
psql_run -d navd -c "SELECT pg_stat_statements_reset()" >/dev/null
line=$(run_wrk "$TMP/wrk.txt" "$CONNECTIONS" "$DURATION" "$BENCH/navigate.lua" "$url" "$TMP/sessions.txt")
log "navigations/s $(field rps "$line") (NAVD_FLAGS='$NAVD_FLAGS' PRE='$PRE')"
psql_run -d navd -c "
    SELECT calls, round((total_exec_time / calls * 1000)::numeric, 1) AS us_per_call,
        round(wal_bytes / calls) AS wal_bytes_per_call,
        round(((shared_blks_hit + shared_blks_read) / calls)::numeric, 1) AS buffers_per_call,
        left(regexp_replace(query, '\s+', ' ', 'g'), 60) AS statement
    FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 5"
