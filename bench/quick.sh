#!/usr/bin/env bash
# bench/quick.sh: one quick comparison while working, not a recorded benchmark.
#
#   bench/quick.sh [SCENARIO] [CONNECTIONS]     SCENARIO: get (default), navigate, transitions
#
# Runs the ceiling (bench/ceiling.c, plain GET), then navd with the memory store,
# then navd with the SQLite store, one after the other, each for DURATION (default
# 5s) with wrk -t1 -cCONNECTIONS (default 32) on SESSIONS (1000) fresh sessions,
# and prints one line per server: requests/s, p50/p99 in ms, and the ratio to the
# ceiling of this run. SERVERS="memory sqlite" skips the ceiling; NAVD_FLAGS adds
# `navd serve` flags. bench/run.sh is the full, recorded benchmark.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
cd "$ROOT"

SCENARIO=${1:-get}
CONNS=${2:-32}
DURATION=${DURATION:-5s}
SESSIONS=${SESSIONS:-1000}
SERVERS=${SERVERS:-ceiling memory sqlite}
NAVD=${NAVD:-$ROOT/.build/release/navd}
GRAPH=${GRAPH:-$ROOT/Examples/news.json}
NAVD_FLAGS=${NAVD_FLAGS:-}

# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
bench_init quick

ensure_wrk
private_navd
ceiling_rps=""

report() {
    local server=$1 line=$2 rps ratio=""
    rps=$(field rps "$line")
    [[ -n $ceiling_rps && $server != ceiling ]] && ratio=$(python3 -c "print(f'{$rps / $ceiling_rps:.0%} of the ceiling')")
    printf '%-8s %-11s c%-4s %9s req/s  p50 %6.2f ms  p99 %6.2f ms  non-2xx %s  %s\n' "$server" "$SCENARIO" "$CONNS" "$rps" \
        "$(python3 -c "print($(field p50_us "$line") / 1000)")" "$(python3 -c "print($(field p99_us "$line") / 1000)")" \
        "$(field non2xx "$line")" "$ratio"
}

for server in $SERVERS; do
    port=$(free_port)
    url=http://127.0.0.1:$port
    case $server in
    ceiling)
        # shellcheck disable=SC2046
        "${CC:-cc}" -O2 -o "$TMP/ceiling" "$BENCH/ceiling.c" $(pkg-config --cflags --libs libmicrohttpd) -lpthread
        start_server "$TMP/ceiling.log" "$url/" "$TMP/ceiling" "$port" 2
        line=$(run_wrk "$TMP/ceiling.txt" "$CONNS" "$DURATION" "$BENCH/ceiling.lua" "$url")
        ceiling_rps=$(field rps "$line")
        ;;
    memory | sqlite)
        store=$server
        [[ $server == sqlite ]] && store="sqlite:$TMP/navd.db"
        # shellcheck disable=SC2086
        start_server "$TMP/$server.log" "$url/healthz" "$NAVD" serve --graph "$GRAPH" --store "$store" \
            --listen "127.0.0.1:$port" $NAVD_FLAGS
        python3 "$BENCH/sessions.py" --url "$url" --count "$SESSIONS" --procs 2 --out "$TMP/sessions.txt" 2>/dev/null
        line=$(run_wrk "$TMP/$server.txt" "$CONNS" "$DURATION" "$BENCH/$SCENARIO.lua" "$url" "$TMP/sessions.txt")
        ;;
    *) die "unknown server $server (ceiling, memory, sqlite)" ;;
    esac
    stop_server "$SERVER_PID"
    report "$server" "$line"
done
