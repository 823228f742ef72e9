# lib.sh: helpers shared by the scripts in bench/ (sourced, not run).
# Expects `set -euo pipefail`; a script calls bench_init first.

BENCH_PIDS=()

# The variables every script takes (a script may set them first); needs ROOT.
NAVD=${NAVD:-$ROOT/.build/release/navd}
GRAPH=${GRAPH:-$ROOT/Examples/news.json}
NAVD_FLAGS=${NAVD_FLAGS:-}
BENCH_OUT=${BENCH_OUT:-$ROOT/.build/bench}
KEEP_TMP=${KEEP_TMP:-0}

# bench_init NAME: makes the temporary folder $TMP (navd-NAME.XXXXXX) and arranges that
# on exit every process the script started is stopped, the script's own bench_on_exit
# (if it defines one) runs, and $TMP is removed (kept with KEEP_TMP=1).
bench_init() {
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/navd-$1.XXXXXX")
    trap bench_exit EXIT
    trap 'exit 130' INT TERM
}

bench_exit() {
    bench_cleanup
    if declare -F bench_on_exit >/dev/null; then bench_on_exit; fi
    postgres_stop
    if [[ ${KEEP_TMP:-0} == 1 ]]; then log "kept $TMP"; else rm -rf "$TMP"; fi
}

# private_navd: benchmarks a copy of $NAVD in $TMP (others may rebuild .build/release/navd
# meanwhile) and points NAVD at it.
private_navd() {
    [[ -x $NAVD ]] || die "$NAVD is missing: run 'swift build -c release --product navd' (make bench does)"
    cp "$NAVD" "$TMP/navd"
    NAVD=$TMP/navd
}

# Stops every process this script started, newest first, by its pid.
bench_cleanup() {
    local i pid
    for ((i = ${#BENCH_PIDS[@]} - 1; i >= 0; i--)); do
        pid=${BENCH_PIDS[i]}
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
    BENCH_PIDS=()
}

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Installs wrk with apt-get when it is missing (CI machines start clean).
ensure_wrk() {
    command -v wrk >/dev/null 2>&1 && return
    log "installing wrk"
    command -v apt-get >/dev/null 2>&1 || die "wrk is missing and apt-get is not available"
    apt-get install -y -qq wrk >/dev/null 2>&1 \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
    command -v wrk >/dev/null 2>&1 || die "could not install wrk"
}

# A TCP port free on the loopback interface right now.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Waits until URL answers (any HTTP status) or the process PID exits.
wait_http() {
    local url=$1 pid=$2
    for _ in $(seq 1 300); do
        kill -0 "$pid" 2>/dev/null || return 1
        if python3 - "$url" <<'PY' 2>/dev/null; then return 0; fi
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(sys.argv[1], timeout=1)
except urllib.error.HTTPError:
    pass
PY
        sleep 0.1
    done
    return 1
}

# start_server LOG URL_TO_POLL COMMAND…: starts COMMAND in the background with
# its output in LOG and waits until it answers; sets SERVER_PID.
start_server() {
    local logfile=$1 url=$2
    shift 2
    "$@" >"$logfile" 2>&1 &
    SERVER_PID=$!
    BENCH_PIDS+=("$SERVER_PID")
    if ! wait_http "$url" "$SERVER_PID"; then
        tail -n 20 "$logfile" >&2 || true
        die "$(basename "$1") did not start (log: $logfile)"
    fi
}

# Benchmarked servers stop at once on SIGTERM: no drain window for load balancers.
export NAVD_DRAIN=${NAVD_DRAIN:-0}

# Stops one server this script started.
stop_server() {
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    for i in "${!BENCH_PIDS[@]}"; do
        [[ ${BENCH_PIDS[i]} == "$pid" ]] && unset 'BENCH_PIDS[i]'
    done
    BENCH_PIDS=(${BENCH_PIDS[@]+"${BENCH_PIDS[@]}"})
}

# run_wrk OUTFILE CONNECTIONS DURATION SCRIPT URL [SCRIPT_ARGS…]: runs wrk with
# one thread and prints its RESULT line (see bench/common.lua).
run_wrk() {
    local out=$1 conns=$2 duration=$3 script=$4 url=$5
    shift 5
    BENCH_DIR=$BENCH wrk -t1 -c"$conns" -d"$duration" -s "$script" "$url" -- "$@" >"$out" 2>&1 || true
    grep -m1 '^RESULT ' "$out" || { cat "$out" >&2; echo "RESULT failed=1"; }
}

# field NAME RESULT_LINE: the value of NAME=… in a RESULT line (empty if absent).
field() {
    local name=$1 line=$2
    sed -n "s/.*[[:space:]]$name=\([^[:space:]]*\).*/\1/p" <<<" $line"
}

# Resident memory of PID in KiB (VmRSS from /proc/PID/status).
rss_kib() {
    awk '/^VmRSS:/ {print $2}' "/proc/$1/status"
}

# One line describing the machine.
machine_info() {
    local cpu
    cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
    printf 'nproc=%s cpu="%s" kernel=%s loadavg="%s"\n' \
        "$(nproc)" "$cpu" "$(uname -r)" "$(cut -d' ' -f1-3 /proc/loadavg)"
}

# postgres_start NAME: a throwaway PostgreSQL cluster for this script (initdb/pg_ctl as the
# postgres user, fsync and synchronous_commit on, as shipped) on a free loopback port; sets
# PG_BIN, PG_PORT and PG_DIR. PG_OPTIONS adds server options (`-c name=value …`). bench_exit
# stops it and removes its folder.
PG_DIR=""
postgres_start() {
    PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
    [[ -x $PG_BIN/initdb ]] || die "PostgreSQL server binaries are missing (make test-deps installs them)"
    PG_PORT=$(free_port)
    # Its own folder: the postgres user cannot enter $TMP (mode 700).
    PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/navd-$1-pg.XXXXXX")
    chown postgres "$PG_DIR"
    runuser -u postgres -- "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U postgres >/dev/null
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w -t 30 start \
        -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=200 ${PG_OPTIONS:-}" >/dev/null
    log "PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT (fsync=on, synchronous_commit=on)"
}

# psql_run ARGS…: psql as the postgres user on the cluster postgres_start started, quiet,
# stopping at the first error.
psql_run() { runuser -u postgres -- "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -v ON_ERROR_STOP=1 -q "$@"; }

postgres_stop() {
    [[ -n $PG_DIR ]] || return 0
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
    PG_DIR=""
}
