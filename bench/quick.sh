#!/usr/bin/env bash
# bench/quick.sh: one quick comparison while working, not a recorded benchmark.
#
#   bench/quick.sh [SCENARIO] [CONNECTIONS]     SCENARIO: get (default), navigate, transitions
#
# Runs the ceiling (bench/ceiling.c, plain GET), then navd with the memory store,
# then navd with the SQLite store, one after the other, each for DURATION (default
# 5s) with wrk -t1 -cCONNECTIONS (default 32) on SESSIONS (1000) fresh sessions,
# and prints one line per server: requests/s, p50/p99 in ms, and the ratio to the
# ceiling of this run, and the server's own CPU time per request (user and system,
# from /proc/PID/stat: what a request costs the server, whatever the machine's other
# tenants do to the throughput). SERVERS="memory sqlite" skips the ceiling; NAVD_FLAGS adds
# `navd serve` flags; SQLITE_SUFFIX is appended to the SQLite store's path (`?compact=N`, `?sync=full`);
# THREADS (default: the cores) is both servers' pool size, as in bench/run.sh.
# bench/run.sh is the full, recorded benchmark.
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
THREADS=${THREADS:-$(nproc)}

# shellcheck source=bench/lib.sh
source "$BENCH/lib.sh"
bench_init quick

ensure_wrk
private_navd
ceiling_rps=""

# cpu_ticks PID: the process's user and system CPU time so far, in clock ticks.
cpu_ticks() {
    # Fields 14 and 15 of /proc/PID/stat, counted after the ")" that ends the command name.
    sed 's/.*) //' "/proc/$1/stat" | awk '{print $12, $13}'
}

# measure OUT SCRIPT URL [ARGS...]: one wrk run, its RESULT line in LINE and the
# server's CPU per request in CPU.
measure() {
    local out=$1 script=$2 url=$3 before after
    shift 3
    before=$(cpu_ticks "$SERVER_PID")
    LINE=$(run_wrk "$out" "$CONNS" "$DURATION" "$script" "$url" "$@")
    after=$(cpu_ticks "$SERVER_PID")
    CPU=$(python3 - "$before" "$after" "$(field requests "$LINE")" "$(getconf CLK_TCK)" <<'PY'
import sys
(u0, s0), (u1, s1) = (map(int, a.split()) for a in sys.argv[1:3])
requests, hz = int(sys.argv[3] or 0), int(sys.argv[4])
per = lambda ticks: ticks / hz * 1e6 / requests if requests else float("nan")
print(f"CPU/request user {per(u1 - u0):.1f} us  sys {per(s1 - s0):.1f} us")
PY
)
}

report() {
    local server=$1 line=$2 rps ratio=""
    rps=$(field rps "$line")
    [[ -n $ceiling_rps && $server != ceiling ]] && ratio=$(python3 -c "print(f'{$rps / $ceiling_rps:.0%} of the ceiling')")
    printf '%-8s %-11s c%-4s %9s req/s  p50 %6.2f ms  p99 %6.2f ms  non-2xx %s  %s  %s\n' "$server" "$SCENARIO" "$CONNS" "$rps" \
        "$(python3 -c "print($(field p50_us "$line") / 1000)")" "$(python3 -c "print($(field p99_us "$line") / 1000)")" \
        "$(field non2xx "$line")" "$CPU" "$ratio"
}

for server in $SERVERS; do
    port=$(free_port)
    url=http://127.0.0.1:$port
    case $server in
    ceiling)
        # shellcheck disable=SC2046
        "${CC:-cc}" -O2 -o "$TMP/ceiling" "$BENCH/ceiling.c" $(pkg-config --cflags --libs libmicrohttpd) -lpthread
        start_server "$TMP/ceiling.log" "$url/" "$TMP/ceiling" "$port" "$THREADS"
        measure "$TMP/ceiling.txt" "$BENCH/ceiling.lua" "$url"
        ceiling_rps=$(field rps "$LINE")
        ;;
    memory | sqlite)
        store=$server
        [[ $server == sqlite ]] && store="sqlite:$TMP/navd.db${SQLITE_SUFFIX:-}"
        # shellcheck disable=SC2086
        start_server "$TMP/$server.log" "$url/healthz" "$NAVD" serve --graph "$GRAPH" --store "$store" \
            --listen "127.0.0.1:$port" --threads "$THREADS" $NAVD_FLAGS
        python3 "$BENCH/sessions.py" --url "$url" --count "$SESSIONS" --procs 2 --out "$TMP/sessions.txt" 2>/dev/null
        measure "$TMP/$server.txt" "$BENCH/$SCENARIO.lua" "$url" "$TMP/sessions.txt"
        ;;
    *) die "unknown server $server (ceiling, memory, sqlite)" ;;
    esac
    stop_server "$SERVER_PID"
    report "$server" "$LINE"
done
